module example.com/go-broken-base

go 1.19
