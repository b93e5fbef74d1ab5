module github.com/ibkey/ibkey

go 1.26.8
