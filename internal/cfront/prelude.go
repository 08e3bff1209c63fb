package cfront

import "strings"

// preludeMacros are the macros the headers every generated host program
// includes before a kernel (<math.h>, <stddef.h>, <stdint.h>, <stdlib.h>,
// <string.h>) define, as GCC 12 with glibc 2.36 lists them (`cc -E -dM`,
// less the compiler's own and the names reserved for the implementation,
// which stay unknown). A kernel's #ifndef M_PI is false where it is
// compiled, so its fallback #define is not the macro its fused body or
// SIMD lane form expands (preprocess takes them as ppPredefined).
var preludeMacros = strings.Fields(`
	BIG_ENDIAN BYTE_ORDER EXIT_FAILURE EXIT_SUCCESS FD_CLR FD_ISSET FD_SET FD_SETSIZE FD_ZERO
	FP_ILOGB0 FP_ILOGBNAN FP_INFINITE FP_NAN FP_NORMAL FP_SUBNORMAL FP_ZERO HUGE_VAL HUGE_VALF
	HUGE_VALL INFINITY INT16_C INT16_MAX INT16_MIN INT32_C INT32_MAX INT32_MIN INT64_C INT64_MAX
	INT64_MIN INT8_C INT8_MAX INT8_MIN INTMAX_C INTMAX_MAX INTMAX_MIN INTPTR_MAX INTPTR_MIN
	INT_FAST16_MAX INT_FAST16_MIN INT_FAST32_MAX INT_FAST32_MIN INT_FAST64_MAX INT_FAST64_MIN
	INT_FAST8_MAX INT_FAST8_MIN INT_LEAST16_MAX INT_LEAST16_MIN INT_LEAST32_MAX INT_LEAST32_MIN
	INT_LEAST64_MAX INT_LEAST64_MIN INT_LEAST8_MAX INT_LEAST8_MIN LITTLE_ENDIAN MATH_ERREXCEPT
	MATH_ERRNO MB_CUR_MAX M_1_PI M_2_PI M_2_SQRTPI M_E M_LN10 M_LN2 M_LOG10E M_LOG2E M_PI M_PI_2
	M_PI_4 M_SQRT1_2 M_SQRT2 NAN NFDBITS NULL PDP_ENDIAN PTRDIFF_MAX PTRDIFF_MIN RAND_MAX
	SIG_ATOMIC_MAX SIG_ATOMIC_MIN SIZE_MAX UINT16_C UINT16_MAX UINT32_C UINT32_MAX UINT64_C
	UINT64_MAX UINT8_C UINT8_MAX UINTMAX_C UINTMAX_MAX UINTPTR_MAX UINT_FAST16_MAX UINT_FAST32_MAX
	UINT_FAST64_MAX UINT_FAST8_MAX UINT_LEAST16_MAX UINT_LEAST32_MAX UINT_LEAST64_MAX
	UINT_LEAST8_MAX WCHAR_MAX WCHAR_MIN WCONTINUED WEXITED WEXITSTATUS WIFCONTINUED WIFEXITED
	WIFSIGNALED WIFSTOPPED WINT_MAX WINT_MIN WNOHANG WNOWAIT WSTOPPED WSTOPSIG WTERMSIG WUNTRACED
	alloca be16toh be32toh be64toh fpclassify htobe16 htobe32 htobe64 htole16 htole32 htole64
	isfinite isgreater isgreaterequal isinf isless islessequal islessgreater isnan isnormal
	isunordered le16toh le32toh le64toh math_errhandling offsetof signbit`)

// preludeFunctions are the preludeMacros that C++'s <cmath> makes
// functions: for them cfront cannot say, as it does not know the
// kernel's language when it reads it (ppUnknown).
var preludeFunctions = strings.Fields(`fpclassify isfinite isgreater isgreaterequal isinf isless islessequal
	islessgreater isnan isnormal isunordered signbit`)

// preludePredef is preludeMacros as preprocessWith takes them.
var preludePredef = func() map[string]ppIdent {
	m := make(map[string]ppIdent, len(preludeMacros))
	for _, name := range preludeMacros {
		m[name] = ppPredefined
	}
	for _, name := range preludeFunctions {
		m[name] = ppUnknown
	}
	return m
}()
