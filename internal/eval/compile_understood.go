package eval

import "github.com/mandate-dev/mandate/internal/mandate"

// notUnderstood is how many phrases a draft says it did not understand.
func notUnderstood(d *mandate.Draft) int {
	if d == nil {
		return 0
	}
	return len(d.NotUnderstood)
}
