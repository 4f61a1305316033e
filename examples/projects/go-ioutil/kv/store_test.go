package kv

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "data"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPutThenGet(t *testing.T) {
	s := openTemp(t)
	if err := s.Put("greeting", []byte("hello")); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get("greeting")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != "hello" {
		t.Fatalf("Get = %q, want %q", got, "hello")
	}
}

func TestRejectsKeysThatEscape(t *testing.T) {
	s := openTemp(t)
	for _, key := range []string{"", "../etc", "a/b", ".hidden"} {
		if err := s.Put(key, nil); !errors.Is(err, ErrBadKey) {
			t.Errorf("Put(%q) = %v, want ErrBadKey", key, err)
		}
	}
}

func TestPutFromReadsEverything(t *testing.T) {
	s := openTemp(t)
	if err := s.PutFrom("big", strings.NewReader(strings.Repeat("x", 100000))); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Get("big")
	if len(got) != 100000 {
		t.Fatalf("stored %d bytes, want 100000", len(got))
	}
}

func TestKeysIgnoresStrayFiles(t *testing.T) {
	s := openTemp(t)
	for _, key := range []string{"b", "a", "c"} {
		if err := s.Put(key, []byte(key)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(s.dir, "notes.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(s.dir, "sub.val"), 0o755); err != nil {
		t.Fatal(err)
	}
	keys, err := s.Keys()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b", "c"}; !reflect.DeepEqual(keys, want) {
		t.Fatalf("Keys = %v, want %v", keys, want)
	}
}

func TestExportAndSnapshot(t *testing.T) {
	s := openTemp(t)
	_ = s.Put("k1", []byte("v1"))
	_ = s.Put("k2", []byte("v2"))
	var buf bytes.Buffer
	if err := s.Export(&buf); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), "k1=v1\nk2=v2\n"; got != want {
		t.Fatalf("Export = %q, want %q", got, want)
	}
	dir, err := s.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	copied, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if keys, _ := copied.Keys(); !reflect.DeepEqual(keys, []string{"k1", "k2"}) {
		t.Fatalf("snapshot keys = %v", keys)
	}
}
