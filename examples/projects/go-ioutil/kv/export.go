package kv

import (
	"fmt"
	"io"
	"io/ioutil"
	"path/filepath"
)

// Export writes every key and value to w as "key=value" lines.
func (s *Store) Export(w io.Writer) error {
	keys, err := s.Keys()
	if err != nil {
		return err
	}
	for _, key := range keys {
		value, err := s.Get(key)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "%s=%s\n", key, value); err != nil {
			return err
		}
	}
	return nil
}

// Snapshot copies the store into a fresh temporary directory and returns its path.
func (s *Store) Snapshot() (string, error) {
	dir, err := ioutil.TempDir("", "kv-snapshot-")
	if err != nil {
		return "", err
	}
	keys, err := s.Keys()
	if err != nil {
		return "", err
	}
	for _, key := range keys {
		value, err := s.Get(key)
		if err != nil {
			return "", err
		}
		if err := ioutil.WriteFile(filepath.Join(dir, key+suffix), value, 0o600); err != nil {
			return "", err
		}
	}
	return dir, nil
}
