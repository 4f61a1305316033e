// Command kvdump prints every key=value pair of a kv store, or loads one value from stdin.
//
//	kvdump DIR            print the store
//	kvdump DIR KEY < FILE store FILE's contents under KEY
package main

import (
	"fmt"
	"io/ioutil"
	"os"

	"example.com/go-ioutil/kv"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "kvdump:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 1 || len(args) > 2 {
		return fmt.Errorf("usage: kvdump DIR [KEY]")
	}
	store, err := kv.Open(args[0])
	if err != nil {
		return err
	}
	if len(args) == 1 {
		return store.Export(os.Stdout)
	}
	value, err := ioutil.ReadAll(os.Stdin)
	if err != nil {
		return err
	}
	return store.Put(args[1], value)
}
