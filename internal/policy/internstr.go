package policy

import (
	"reflect"
	"strings"
	"unsafe"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"

	"github.com/mandate-dev/mandate/internal/action"
)

// A string field of a native struct that is not one of an evaluation's
// views (session.recent's entries, a flow value, a sequence step's
// targets, a path or command of the action) is boxed into a new CEL String
// on every read: CEL's getter returns String(field) as an interface, a
// 16-byte allocation. Comprehensions read such fields once per element and
// rule; on a session with a few denials, builtin.repeated-denials alone read
// session.recent's effect and kind about 30 times a call.
//
// Most of these fields hold one of a few words: a kind, an effect, a
// target's role, a baseline state, a path's access. For a word of that
// vocabulary the getter returns a String boxed once, at start; any other
// value is read by CEL's own getter as before. A String is a value — CEL
// compares its contents, never its identity — so the value returned is the
// one the getter would have made.

// internedStrings are the words boxed once; see internTable.
var internedStrings = internTable()

// internedFields are the field names (JSON) that hold a word of the
// vocabulary: a kind, an effect, a target's role, a path's access, a
// baseline's state. Other string fields (paths, names, values) rarely do,
// and a lookup that misses costs more than it saves, so their getters are
// CEL's own.
var internedFields = map[string]bool{"kind": true, "effect": true, "role": true, "access": true, "state": true}

// internTable boxes the kinds (a path's access is one too), the effects and
// the closed vocabularies of the facts rules read: a flow target's role and
// a baseline's state.
func internTable() map[string]ref.Val {
	words := []string{string(Allow), string(Deny), string(Ask)}
	for _, k := range action.AllKinds() {
		words = append(words, string(k))
	}
	words = append(words,
		"path", "recipient", "account", "host", "url", "amount", // flow roles
		"learning", "monitoring", "frozen", // baseline states
	)
	m := make(map[string]ref.Val, len(words))
	for _, w := range words {
		m[w] = types.String(w)
	}
	return m
}

// internField is a string field of a native struct type: the runtime type
// words of the struct and of a pointer to it (what an interface holding
// either carries), and the field's offset.
type internField struct {
	typ      reflect.Type
	index    int
	offset   uintptr
	structTW unsafe.Pointer
	ptrTW    unsafe.Pointer
}

// eface is the layout of an empty interface: CEL's own getters read the
// struct behind obj the same way (types.unpackAny).
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

func typeWord(v any) unsafe.Pointer { return (*eface)(unsafe.Pointer(&v)).typ }

func newInternField(t reflect.Type, i int) internField {
	return internField{
		typ: t, index: i, offset: t.Field(i).Offset,
		structTW: typeWord(reflect.Zero(t).Interface()),
		ptrTW:    typeWord(reflect.Zero(reflect.PointerTo(t)).Interface()),
	}
}

// nativeStringFields lists the top-level string fields named in
// internedFields, and the slice fields (lists), by CEL type name and field
// name, of the struct types reachable from roots (their fields, elements
// and pointers), under the names ext.NativeTypes gives them. The string
// fields of the types skip names (the views) are left out.
func nativeStringFields(roots []reflect.Type, skip map[string]bool) (strs, lists map[string]map[string]internField) {
	out := map[string]map[string]internField{}
	lists = map[string]map[string]internField{}
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			if t.Kind() == reflect.Map {
				walk(t.Key())
			}
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		fields, slices := map[string]internField{}, map[string]internField{}
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			walk(f.Type)
			tag, _, _ := strings.Cut(f.Tag.Get(nativeStructTagName), ",")
			if tag == "-" {
				continue
			}
			if tag == "" {
				tag = f.Name
			}
			if f.Type.Kind() == reflect.String && !f.Anonymous && internedFields[tag] {
				fields[tag] = newInternField(t, i)
			}
			if f.Type.Kind() == reflect.Slice && !f.Anonymous {
				slices[tag] = newInternField(t, i)
			}
		}
		if name := t.String(); !skip[name] && len(fields) > 0 {
			out[name] = fields
		}
		// A view keeps a list once read, but it is a new view each
		// evaluation: its empty lists are worth sharing too.
		if len(slices) > 0 {
			lists[t.String()] = slices
		}
	}
	for _, r := range roots {
		walk(r)
	}
	return out, lists
}

// internGetter wraps get, CEL's getter of the string field f: a word of
// the vocabulary comes boxed from the table. CEL hands the getter a list
// element as the struct (an interface whose data word points into the
// list) and a variable as a pointer to it; either way the data word points
// at the struct, which holds a string and so is never stored in the
// interface itself. Anything else goes to get.
func internGetter(f internField, get func(any) (any, error)) func(any) (any, error) {
	return func(obj any) (any, error) {
		if e := (*eface)(unsafe.Pointer(&obj)); (e.typ == f.structTW || e.typ == f.ptrTW) && e.data != nil {
			if v, ok := internedStrings[*(*string)(unsafe.Add(e.data, f.offset))]; ok {
				return v, nil
			}
		}
		return get(obj)
	}
}

// An empty list field of a native struct (a call's programs, reads or
// hosts, a step's targets, most of the time) got a new list wrapper on every
// read too. emptyListGetter wraps get, CEL's getter of the slice field f:
// an empty field returns the list get made, once, for an empty (or a nil)
// slice of the field's type; CEL lists are immutable values, so one serves
// every read. A non-empty field goes to get.
func emptyListGetter(f internField, get func(any) (any, error)) (func(any) (any, error), error) {
	made := func(nilSlice bool) (any, error) {
		v := reflect.New(f.typ)
		if !nilSlice {
			fv := v.Elem().Field(f.index)
			fv.Set(reflect.MakeSlice(fv.Type(), 0, 0))
		}
		return get(v.Interface())
	}
	emptyNil, err := made(true)
	if err != nil {
		return nil, err
	}
	empty, err := made(false)
	if err != nil {
		return nil, err
	}
	return func(obj any) (any, error) {
		if e := (*eface)(unsafe.Pointer(&obj)); (e.typ == f.structTW || e.typ == f.ptrTW) && e.data != nil {
			// Every slice has the header of a []byte.
			if l := (*[]byte)(unsafe.Add(e.data, f.offset)); len(*l) == 0 {
				if *l == nil {
					return emptyNil, nil
				}
				return empty, nil
			}
		}
		return get(obj)
	}, nil
}
