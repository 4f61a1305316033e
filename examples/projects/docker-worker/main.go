// Command worker reads one job per line from stdin and prints one result per line.
//
// A job is "upper TEXT", "lower TEXT" or "count TEXT"; anything else is rejected.
package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

func main() {
	failed := 0
	scanner := bufio.NewScanner(os.Stdin)
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		if line == "" {
			continue
		}
		result, err := handle(line)
		if err != nil {
			failed++
			fmt.Printf("error: %v\n", err)
			continue
		}
		fmt.Println(result)
	}
	if failed > 0 {
		os.Exit(1)
	}
}

func handle(job string) (string, error) {
	kind, text, _ := strings.Cut(job, " ")
	switch kind {
	case "upper":
		return strings.ToUpper(text), nil
	case "lower":
		return strings.ToLower(text), nil
	case "count":
		return fmt.Sprint(len(strings.Fields(text))), nil
	default:
		return "", fmt.Errorf("unknown job %q", kind)
	}
}
