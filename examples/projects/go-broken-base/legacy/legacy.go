// Package legacy was half-migrated upstream: it calls a helper that no longer exists, so
// this commit does not build, whatever a patch does elsewhere.
package legacy

// Convert converts the old format.
func Convert(input string) string {
	return convertV1(input)
}
