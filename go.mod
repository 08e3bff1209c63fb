module github.com/goop2/op2

go 1.24
