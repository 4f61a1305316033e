// Package config reads "key = value" configuration files.
package config

import (
	"bufio"
	"io"
	"os"
	"strings"

	"github.com/pkg/errors"
)

// ErrMissingKey is returned by Require for keys that are not set.
var ErrMissingKey = errors.New("missing key")

// Config holds the settings read from one file.
type Config struct {
	values map[string]string
}

// Load reads and parses the file at path.
func Load(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errors.Wrap(err, "open config")
	}
	defer f.Close()
	cfg, err := Parse(f)
	if err != nil {
		return nil, errors.Wrapf(err, "parse %s", path)
	}
	return cfg, nil
}

// Parse reads "key = value" lines; blank lines and lines starting with # are ignored.
func Parse(r io.Reader) (*Config, error) {
	cfg := &Config{values: map[string]string{}}
	scanner := bufio.NewScanner(r)
	for n := 1; scanner.Scan(); n++ {
		line := strings.TrimSpace(scanner.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			return nil, errors.Wrapf(ErrSyntax, "line %d", n)
		}
		cfg.values[strings.TrimSpace(key)] = strings.TrimSpace(value)
	}
	if err := scanner.Err(); err != nil {
		return nil, errors.Wrap(err, "read config")
	}
	return cfg, nil
}

// Get returns the value of key, or fallback when it is not set.
func (c *Config) Get(key, fallback string) string {
	if v, ok := c.values[key]; ok {
		return v
	}
	return fallback
}

// Require returns the value of key or an error wrapping ErrMissingKey.
func (c *Config) Require(key string) (string, error) {
	if v, ok := c.values[key]; ok {
		return v, nil
	}
	return "", errors.Wrapf(ErrMissingKey, "require %q", key)
}
