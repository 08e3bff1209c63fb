// Package archtest holds tests of the module's structure, which read the
// source of every package and the docs: that no code outside the
// packages allowed to asks an argument's kind (issue 51: argument facts
// are computed once, in core.Signature, and read from there), and that
// the docs' relative links lead to files and headings that exist and
// the names they give are the packages'. It has no code of its own.
package archtest
