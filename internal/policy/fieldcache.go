package policy

import (
	"fmt"
	"reflect"
	"strings"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
)

// CEL reads a field of a native struct through a getter that converts the
// Go value on every read: a slice field gets a new list wrapper, a string
// field a new boxed String. The built-in rules read action.kind,
// action.kinds, mandate.allow, action.paths and action.commands several
// times in one evaluation (every rule that passes its guard reads them
// again), which made these wrappers about a third of a decision's
// allocations. The views an evaluation owns (actionView, mandateView) keep
// each field's CEL value after its first read, so every later read in the
// same evaluation is the same value without a conversion.
//
// The cached value is the one the getter returned, so a rule sees exactly
// what it saw before; the cache lives in the view, which is filled afresh
// for each evaluation and never shared between goroutines.

// fieldCacher is a view whose field values may be kept for its
// evaluation: cachedFields returns its slots, one per field that cachedKind
// keeps, in the order of the struct's fields. Each view's array has exactly
// as many slots as it has such fields; newViewProvider fails for a view
// with more, so a field added without a slot is a load error, not a silent
// miss.
type fieldCacher interface{ cachedFields() []ref.Val }

func (v *actionView) cachedFields() []ref.Val  { return v.cache[:] }
func (v *mandateView) cachedFields() []ref.Val { return v.cache[:] }

// viewProvider is the native type provider with the getters of the cached
// views' fields wrapped to keep their values.
type viewProvider struct {
	types.Provider
	// slots maps a CEL type name and field name to the field's index.
	slots map[string]map[string]int
	// strs are the string fields of the other native types, whose
	// getters return the interned words boxed once (internstr.go).
	strs map[string]map[string]internField
	// lists are their slice fields, whose getters return an empty list
	// made once (emptyListGetter).
	lists map[string]map[string]internField
}

// newViewProvider wraps base for the views of CEL types named by views,
// and for the string fields of the other struct types reachable from
// natives.
func newViewProvider(base types.Provider, views map[string]reflect.Type, natives []reflect.Type) (*viewProvider, error) {
	p := &viewProvider{Provider: base, slots: map[string]map[string]int{}}
	skip := map[string]bool{}
	for name, t := range views {
		skip[name], skip[t.String()] = true, true
	}
	p.strs, p.lists = nativeStringFields(natives, skip)
	for name, t := range views {
		if l, ok := p.lists[t.String()]; ok {
			p.lists[name] = l // the view's CEL name
		}
		c, ok := reflect.New(t).Interface().(fieldCacher)
		if !ok {
			return nil, fmt.Errorf("policy: view %s keeps no field cache", t)
		}
		capacity := len(c.cachedFields())
		fields := map[string]int{}
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			tag, _, _ := strings.Cut(f.Tag.Get(nativeStructTagName), ",")
			if tag == "-" {
				continue
			}
			if tag == "" {
				tag = f.Name
			}
			if !cachedKind(f.Type.Kind()) {
				continue
			}
			if len(fields) == capacity {
				return nil, fmt.Errorf("policy: view %s has more than the %d fields its cache holds", t, capacity)
			}
			fields[tag] = len(fields)
		}
		p.slots[name] = fields
	}
	return p, nil
}

// cachedKind reports whether a field of kind k is worth keeping: its getter
// allocates (a boxed string, a list, map or object wrapper). Booleans and
// numbers convert without an allocation and get no slot.
func cachedKind(k reflect.Kind) bool {
	switch k {
	case reflect.String, reflect.Slice, reflect.Map, reflect.Struct, reflect.Pointer:
		return true
	}
	return false
}

// FindStructFieldType returns the base provider's field type, with a getter
// that keeps its value in the view for a cached view's field.
func (p *viewProvider) FindStructFieldType(structType, fieldName string) (*types.FieldType, bool) {
	ft, ok := p.Provider.FindStructFieldType(structType, fieldName)
	if !ok {
		return ft, ok
	}
	slot, cached := p.slots[structType][fieldName]
	if !cached {
		if f, ok := p.strs[structType][fieldName]; ok && ft.Type != nil && ft.Type.Kind() == types.StringKind {
			wrapped := *ft
			wrapped.GetFrom = internGetter(f, ft.GetFrom)
			return &wrapped, true
		}
		if f, ok := p.lists[structType][fieldName]; ok && ft.Type != nil && ft.Type.Kind() == types.ListKind {
			get, err := emptyListGetter(f, ft.GetFrom)
			if err != nil {
				return ft, ok
			}
			wrapped := *ft
			wrapped.GetFrom = get
			return &wrapped, true
		}
		return ft, ok
	}
	get := ft.GetFrom
	if f, ok := p.lists[structType][fieldName]; ok && ft.Type != nil && ft.Type.Kind() == types.ListKind {
		if g, err := emptyListGetter(f, get); err == nil {
			get = g
		}
	}
	wrapped := *ft
	wrapped.GetFrom = func(obj any) (any, error) {
		c, ok := obj.(fieldCacher)
		if !ok {
			return get(obj)
		}
		fields := c.cachedFields()
		if v := fields[slot]; v != nil {
			return v, nil
		}
		v, err := get(obj)
		if err == nil {
			if rv, ok := v.(ref.Val); ok {
				fields[slot] = rv
			}
		}
		return v, err
	}
	return &wrapped, true
}
