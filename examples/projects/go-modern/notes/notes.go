// Package notes keeps plain-text notes in a folder, one .txt file each.
package notes

import (
	"io/ioutil"
	"path/filepath"
	"strings"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"
)

// Load reads every .txt note in dir, keyed by its file name without the extension.
func Load(dir string) (map[string]string, error) {
	entries, err := ioutil.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	found := make(map[string]string)
	for _, entry := range entries {
		if entry.IsDir() || filepath.Ext(entry.Name()) != ".txt" {
			continue
		}
		data, err := ioutil.ReadFile(filepath.Join(dir, entry.Name()))
		if err != nil {
			return nil, err
		}
		found[strings.TrimSuffix(entry.Name(), ".txt")] = string(data)
	}
	return found, nil
}

// Save writes a note readable by its owner only.
func Save(dir, name, body string) error {
	return ioutil.WriteFile(filepath.Join(dir, name+".txt"), []byte(body), 0o600)
}

// Title is a note's first line in title case.
func Title(body string) string {
	first, _, _ := strings.Cut(body, "\n")
	return cases.Title(language.English).String(strings.TrimSpace(first))
}
