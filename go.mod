module github.com/ccbed/ccbed

go 1.26
