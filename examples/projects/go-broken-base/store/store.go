// Package store keeps one value per file.
package store

import (
	"io/ioutil"
	"path/filepath"
)

// Put writes value under key.
func Put(dir, key, value string) error {
	return ioutil.WriteFile(filepath.Join(dir, key), []byte(value), 0o644)
}

// Get reads the value under key.
func Get(dir, key string) (string, error) {
	data, err := ioutil.ReadFile(filepath.Join(dir, key))
	return string(data), err
}
