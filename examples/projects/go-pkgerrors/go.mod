module example.com/go-pkgerrors

go 1.19

require github.com/pkg/errors v0.9.1

// Vendored stand-in so the module builds without network access.
replace github.com/pkg/errors => ./third_party/pkgerrors
