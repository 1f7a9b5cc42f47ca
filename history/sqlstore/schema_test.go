package sqlstore_test

import (
	"strings"
	"testing"

	"github.com/querylens/querylens/history/postgres"
	"github.com/querylens/querylens/history/sqlite"
	"github.com/querylens/querylens/history/sqlstore"
)

// TestSchemaBound checks that every dialect spells every placeholder of
// the shared schema and statements, and that the dialects count the same
// migration steps (a version means the same schema everywhere).
func TestSchemaBound(t *testing.T) {
	dialects := []sqlstore.Dialect{sqlite.Dialect, postgres.Dialect}
	want := len(dialects[0].Migrations())
	for _, d := range dialects {
		t.Run(d.Name, func(t *testing.T) {
			steps := d.Migrations()
			if len(steps) != want {
				t.Errorf("%d migration steps, %s has %d", len(steps), dialects[0].Name, want)
			}
			for i, step := range steps {
				for j, q := range step {
					if strings.ContainsAny(q, "{}") {
						t.Errorf("step %d, statement %d keeps a placeholder: %s", i+1, j+1, q)
					}
				}
			}
		})
	}
}
