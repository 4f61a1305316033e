module example.com/go-ioutil

go 1.19
