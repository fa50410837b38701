package engine

import (
	"reflect"
	"testing"

	"github.com/mandate-dev/mandate/internal/action"
)

// TestDecisionWireSetsEveryField fails when api.Decision gains a field that
// Decision.Wire does not fill: a new wire field must come from the engine.
func TestDecisionWireSetsEveryField(t *testing.T) {
	d := &Decision{}
	v := reflect.ValueOf(d).Elem()
	for i := range v.NumField() {
		if !v.Type().Field(i).IsExported() {
			continue // the engine's own bookkeeping, never on the wire
		}
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Int, reflect.Int64:
			f.SetInt(7)
		case reflect.Slice:
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		case reflect.Pointer:
			f.Set(reflect.New(f.Type().Elem()))
		default:
			t.Fatalf("Decision.%s: a %s this test cannot fill", v.Type().Field(i).Name, f.Kind())
		}
	}
	d.Action = &action.Action{Tool: "t"}
	w := reflect.ValueOf(d.Wire()).Elem()
	for i := range w.NumField() {
		if w.Field(i).IsZero() {
			t.Errorf("api.Decision.%s is not set by Decision.Wire", w.Type().Field(i).Name)
		}
	}
}
