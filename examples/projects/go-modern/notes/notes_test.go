package notes

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestSaveThenLoad(t *testing.T) {
	dir := t.TempDir()
	if err := Save(dir, "groceries", "milk\neggs"); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if loaded["groceries"] != "milk\neggs" {
		t.Fatalf("loaded %q", loaded["groceries"])
	}
}

func TestSaveKeepsNotesPrivate(t *testing.T) {
	dir := t.TempDir()
	if err := Save(dir, "secret", "x"); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(dir, "secret.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", info.Mode().Perm())
	}
}

func TestLoadSkipsOtherFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "image.png"), []byte{1}, 0o644); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(dir)
	if err != nil || len(loaded) != 0 {
		t.Fatalf("loaded %v, %v", loaded, err)
	}
}

func TestIndexTitlesInNameOrder(t *testing.T) {
	titles, err := Index(context.Background(), map[string]string{"b": "second note", "a": "first note\nbody"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(titles, []string{"First Note", "Second Note"}) {
		t.Fatalf("titles %q", titles)
	}
}
