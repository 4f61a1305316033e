// Command checkconf validates configuration files and reports required keys that are missing.
//
//	checkconf FILE KEY...
package main

import (
	"fmt"
	"os"

	"github.com/pkg/errors"

	"example.com/go-pkgerrors/config"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "checkconf:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: checkconf FILE KEY...")
	}
	cfg, err := config.Load(args[0])
	if err != nil {
		return err
	}
	for _, key := range args[1:] {
		if _, err := cfg.Require(key); err != nil {
			return errors.Wrapf(err, "check %s", args[0])
		}
	}
	return nil
}
