// Command notes prints the titles of the notes in a folder.
package main

import (
	"context"
	"fmt"
	"os"

	"example.com/go-modern/notes"
)

func main() {
	all, err := notes.Load(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	titles, err := notes.Index(context.Background(), all)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, title := range titles {
		fmt.Println(title)
	}
}
