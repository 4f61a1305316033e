package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseSkipsCommentsAndBlanks(t *testing.T) {
	cfg, err := Parse(strings.NewReader("# comment\n\nname = demo\n port=8080 \n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Get("name", ""); got != "demo" {
		t.Errorf("name = %q", got)
	}
	if got := cfg.Get("port", ""); got != "8080" {
		t.Errorf("port = %q", got)
	}
	if got := cfg.Get("absent", "fallback"); got != "fallback" {
		t.Errorf("absent = %q", got)
	}
}

func TestParseReportsTheBadLine(t *testing.T) {
	_, err := Parse(strings.NewReader("a = 1\nnot a setting\n"))
	if err == nil {
		t.Fatal("want an error")
	}
	if got, want := err.Error(), "line 2: syntax error"; got != want {
		t.Errorf("error = %q, want %q", got, want)
	}
	if !IsSyntax(err) || !errors.Is(err, ErrSyntax) {
		t.Errorf("error %v should be a syntax error", err)
	}
}

func TestRequireWrapsMissingKey(t *testing.T) {
	cfg, _ := Parse(strings.NewReader("a = 1\n"))
	_, err := cfg.Require("b")
	if !IsMissing(err) || !errors.Is(err, ErrMissingKey) {
		t.Fatalf("Require error %v should wrap ErrMissingKey", err)
	}
	if got, want := err.Error(), `require "b": missing key`; got != want {
		t.Errorf("error = %q, want %q", got, want)
	}
}

func TestLoadKeepsTheCause(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "missing.conf"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Load error %v should wrap fs.ErrNotExist", err)
	}
	if !strings.HasPrefix(err.Error(), "open config: ") {
		t.Errorf("error = %q", err)
	}
}

func TestLoadNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.conf")
	if err := os.WriteFile(path, []byte("oops\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), "bad.conf: line 1: syntax error") {
		t.Fatalf("error = %v", err)
	}
	if !IsSyntax(err) {
		t.Errorf("error %v should be a syntax error", err)
	}
}
