// Package kv is a tiny file-backed key/value store: one file per key in a directory.
package kv

import (
	"errors"
	"io"
	"io/ioutil"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

const suffix = ".val"

// ErrBadKey is returned for keys that would escape the store directory.
var ErrBadKey = errors.New("kv: bad key")

// Store keeps each value in <dir>/<key>.val.
type Store struct {
	dir string
}

// Open returns a store rooted at dir, creating the directory if needed.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &Store{dir: dir}, nil
}

func (s *Store) path(key string) (string, error) {
	if key == "" || strings.ContainsAny(key, `/\`) || strings.HasPrefix(key, ".") {
		return "", ErrBadKey
	}
	return filepath.Join(s.dir, key+suffix), nil
}

// Get returns the value stored under key.
func (s *Store) Get(key string) ([]byte, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, err
	}
	return ioutil.ReadFile(p)
}

// Put stores value under key atomically: readers never see a half-written file.
func (s *Store) Put(key string, value []byte) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	tmp, err := ioutil.TempFile(s.dir, ".put-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(value); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), p)
}

// PutFrom stores everything read from r under key.
func (s *Store) PutFrom(key string, r io.Reader) error {
	value, err := ioutil.ReadAll(r)
	if err != nil {
		return err
	}
	return s.Put(key, value)
}

// Keys lists the stored keys in lexical order, ignoring anything that is not a value file.
func (s *Store) Keys() ([]string, error) {
	infos, err := ioutil.ReadDir(s.dir)
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, info := range infos {
		name := info.Name()
		if info.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, suffix) {
			continue
		}
		keys = append(keys, strings.TrimSuffix(name, suffix))
	}
	sort.Strings(keys)
	return keys, nil
}
