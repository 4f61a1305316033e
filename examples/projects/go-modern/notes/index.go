package notes

import (
	"context"
	"maps"
	"slices"

	"golang.org/x/sync/errgroup"
)

// Index returns every note's title, in the order of the notes' names.
func Index(ctx context.Context, all map[string]string) ([]string, error) {
	names := slices.Sorted(maps.Keys(all))
	titles := make([]string, len(names))
	group, _ := errgroup.WithContext(ctx)
	for i := range len(names) {
		group.Go(func() error {
			titles[i] = Title(all[names[i]])
			return nil
		})
	}
	if err := group.Wait(); err != nil {
		return nil, err
	}
	return titles, nil
}
