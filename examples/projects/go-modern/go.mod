module example.com/go-modern

go 1.23.4

require (
	golang.org/x/sync v0.10.0
	golang.org/x/text v0.21.0
)
