package duroxide

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The codec is driven by `dx` struct tags: each wire field is declared once, on the Go
// field that holds it, and one encoder and one decoder walk those declarations in field
// order, which is the Rust declaration order and so serde's key order.
//
//	dx:"key"            required; on a pointer, a serde Option written as null when nil,
//	                    read as nil when missing or null
//	dx:"key,omitempty"  an Option with skip_serializing_if = "Option::is_none": nil is
//	                    left out
//	dx:"key,default"    #[serde(default)]: a missing key reads as the zero value, but an
//	                    explicit null is still a type error
//
// Field types: string, bool, uint32, uint64 (u32 / u64: integer literals only), [][2]string
// (a list of pairs), a pointer to one of these (an Option), a struct of variant pointers
// (ErrorDetails, PoisonMessageType: an externally tagged enum whose variant names are the
// field names), and AppErrorKind / ConfigErrorKind, which write and read themselves.

// wireField is one dx-tagged field of a struct.
type wireField struct {
	key      string
	index    int
	omitNil  bool // omitempty
	optional bool // a missing key leaves the zero value
}

var wireFieldCache sync.Map // reflect.Type -> []wireField

// fieldsOf returns the dx-tagged fields of struct type t in declaration order.
func fieldsOf(t reflect.Type) []wireField {
	if fs, ok := wireFieldCache.Load(t); ok {
		return fs.([]wireField)
	}
	var fs []wireField
	for i := range t.NumField() {
		if tag, ok := t.Field(i).Tag.Lookup("dx"); ok {
			key, opt, _ := strings.Cut(tag, ",")
			isPointer := t.Field(i).Type.Kind() == reflect.Pointer
			fs = append(fs, wireField{key: key, index: i, omitNil: opt == "omitempty" && isPointer,
				optional: opt == "default" || isPointer})
		}
	}
	wireFieldCache.Store(t, fs)
	return fs
}

// writeFields writes the tagged fields of struct v into the object being written.
func writeFields(w *jsonWriter, v reflect.Value) {
	for _, f := range fieldsOf(v.Type()) {
		if fv := v.Field(f.index); !f.omitNil || !fv.IsNil() {
			w.key(f.key)
			encodeValue(w, fv)
		}
	}
}

// readFields fills the tagged fields of struct v from an object's members. Keys nobody
// declares are ignored, as in serde; a declared key given twice is an error.
func readFields(path string, members []jsonMember, v reflect.Value) error {
	for _, f := range fieldsOf(v.Type()) {
		var j jsonValue
		n := 0
		for _, m := range members {
			if m.key == f.key {
				j, n = m.value, n+1
			}
		}
		switch {
		case n > 1:
			return decodeErrorf(path, "duplicate field %q", f.key)
		case n == 0 && !f.optional:
			return decodeErrorf(path, "missing field %q", f.key)
		case n == 1:
			if err := decodeValue(path+"."+f.key, j, v.Field(f.index)); err != nil {
				return err
			}
		}
	}
	return nil
}

var (
	appErrorKindType    = reflect.TypeFor[AppErrorKind]()
	configErrorKindType = reflect.TypeFor[ConfigErrorKind]()
	pairsType           = reflect.TypeFor[[][2]string]()
)

func encodeValue(w *jsonWriter, v reflect.Value) {
	switch t := v.Type(); {
	case t == appErrorKindType:
		v.Interface().(AppErrorKind).writeJSON(w)
	case t == configErrorKindType:
		v.Interface().(ConfigErrorKind).writeJSON(w)
	case t.Kind() == reflect.String:
		w.string(v.String())
	case t.Kind() == reflect.Bool:
		w.buf = strconv.AppendBool(w.buf, v.Bool())
	case t.Kind() == reflect.Uint32 || t.Kind() == reflect.Uint64:
		w.buf = strconv.AppendUint(w.buf, v.Uint(), 10)
	case t.Kind() == reflect.Pointer && v.IsNil():
		w.buf = append(w.buf, "null"...)
	case t.Kind() == reflect.Pointer:
		encodeValue(w, v.Elem())
	case t == pairsType:
		encodePairs(w, v.Interface().([][2]string))
	case t.Kind() == reflect.Struct:
		encodeUnion(w, v)
	default:
		w.fail("field %q: no wire form for %s", w.lastKey, t)
	}
}

// decodeValue decodes j into v, which must be settable; path names j in errors.
func decodeValue(path string, j jsonValue, v reflect.Value) error {
	switch t := v.Type(); {
	case t == appErrorKindType:
		return v.Addr().Interface().(*AppErrorKind).readJSON(path, j)
	case t == configErrorKindType:
		return v.Addr().Interface().(*ConfigErrorKind).readJSON(path, j)
	case t.Kind() == reflect.String && j.kind == jsonString:
		v.SetString(j.text)
	case t.Kind() == reflect.String:
		return typeError(path, j, "a string")
	case t.Kind() == reflect.Bool && j.kind == jsonBool:
		v.SetBool(j.boolean)
	case t.Kind() == reflect.Bool:
		return typeError(path, j, "a boolean")
	case t.Kind() == reflect.Uint32 || t.Kind() == reflect.Uint64:
		return decodeUint(path, j, v)
	case t.Kind() == reflect.Pointer && j.kind != jsonNull:
		p := reflect.New(t.Elem())
		if err := decodeValue(path, j, p.Elem()); err != nil {
			return err
		}
		v.Set(p)
	case t.Kind() == reflect.Pointer: // null: None
	case t == pairsType:
		pairs, err := decodePairs(path, j)
		v.Set(reflect.ValueOf(pairs))
		return err
	case t.Kind() == reflect.Struct:
		return decodeUnion(path, j, v)
	default:
		return decodeErrorf(path, "no wire form for %s", t)
	}
	return nil
}

// decodeUint accepts only a plain non-negative integer literal that fits: serde never
// writes floats, exponents or negative numbers for unsigned fields and refuses them.
func decodeUint(path string, j jsonValue, v reflect.Value) error {
	want := "u" + strconv.Itoa(v.Type().Bits())
	if j.kind != jsonNumber {
		return typeError(path, j, want)
	}
	n, err := strconv.ParseUint(j.text, 10, v.Type().Bits())
	if err != nil {
		return decodeErrorf(path, "invalid value: %s, expected %s", j.describe(), want)
	}
	v.SetUint(n)
	return nil
}

func encodePairs(w *jsonWriter, pairs [][2]string) {
	w.buf = append(w.buf, '[')
	for i, p := range pairs {
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		w.buf = append(w.buf, '[')
		w.string(p[0])
		w.buf = append(w.buf, ',')
		w.string(p[1])
		w.buf = append(w.buf, ']')
	}
	w.buf = append(w.buf, ']')
}

// decodePairs reads a Vec<(String, String)>. An empty list decodes to a nil slice so that
// "missing" and "[]" yield the same Go value and round trips are stable.
func decodePairs(path string, j jsonValue) ([][2]string, error) {
	if j.kind != jsonArray {
		return nil, typeError(path, j, "a list of [name, data] pairs")
	}
	var out [][2]string
	for i, item := range j.items {
		itemPath := fmt.Sprintf("%s[%d]", path, i)
		if item.kind != jsonArray || len(item.items) != 2 {
			return nil, typeError(itemPath, item, "a 2-element array")
		}
		for k, s := range item.items {
			if s.kind != jsonString {
				return nil, typeError(fmt.Sprintf("%s[%d]", itemPath, k), s, "a string")
			}
		}
		out = append(out, [2]string{item.items[0].text, item.items[1].text})
	}
	return out, nil
}

// encodeUnion writes a struct of variant pointers as the enum it stands for. Exactly one
// variant must be set: serde's form has no JSON for none or several.
func encodeUnion(w *jsonWriter, v reflect.Value) {
	set, n := 0, 0
	for i := range v.NumField() {
		if !v.Field(i).IsNil() {
			set, n = i, n+1
		}
	}
	if n != 1 {
		w.fail("%s: exactly one variant must be set, found %d", v.Type().Name(), n)
		return
	}
	writeTagged(w, v.Type().Field(set).Name, v.Field(set).Elem())
}

func decodeUnion(path string, j jsonValue, v reflect.Value) error {
	name, p, err := readTagged(path, j, func(name string) (reflect.Type, bool) {
		f, ok := v.Type().FieldByName(name)
		return f.Type, ok
	})
	if err == nil {
		v.FieldByName(name).Set(p)
	}
	return err
}

// ---------------------------------------------------------------------------------------
// Externally tagged enums of struct variants

// writeTagged writes struct v as the variant {"name":{fields}}.
func writeTagged(w *jsonWriter, name string, v reflect.Value) {
	w.buf = append(w.buf, '{')
	w.key(name)
	w.buf = append(w.buf, '{')
	writeFields(w, v)
	w.buf = append(w.buf, "}}"...)
}

// readTagged decodes {"name":{fields}}; pointerType maps a variant name to the pointer
// type that holds its payload. It returns the name and the new, filled pointer.
func readTagged(path string, j jsonValue, pointerType func(name string) (reflect.Type, bool)) (string, reflect.Value, error) {
	t, err := externalTag(path, j)
	if err != nil {
		return "", reflect.Value{}, err
	}
	typ, ok := pointerType(t.name)
	if !ok {
		return "", reflect.Value{}, decodeErrorf(path, "unknown variant %q", truncate(t.name))
	}
	p := reflect.New(typ.Elem())
	return t.name, p, t.readPayload(path+"::"+t.name, p.Elem())
}

// variantSet indexes the variants of an interface enum (WorkItem, EventKind) by wire name
// and by Go type.
type variantSet struct {
	pointers map[string]reflect.Type // wire name -> pointer to the variant's struct
	names    map[reflect.Type]string // variant struct -> wire name
}

func variantsOf[T any](name func(T) string, protos ...T) variantSet {
	s := variantSet{pointers: map[string]reflect.Type{}, names: map[reflect.Type]string{}}
	for _, p := range protos {
		s.pointers[name(p)] = reflect.PointerTo(reflect.TypeOf(p))
		s.names[reflect.TypeOf(p)] = name(p)
	}
	return s
}

func (s variantSet) pointerType(name string) (reflect.Type, bool) {
	t, ok := s.pointers[name]
	return t, ok
}

// of finds the variant of x, a value or non-nil pointer of a variant type, and returns
// its wire name and the struct to encode.
func (s variantSet) of(x any) (string, reflect.Value, bool) {
	v := reflect.ValueOf(x)
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if !v.IsValid() {
		return "", v, false
	}
	name, ok := s.names[v.Type()]
	return name, v, ok
}

// tagged is one value of a serde externally tagged enum: either a bare string (a unit
// variant) or an object with exactly one key (variant name -> payload).
type tagged struct {
	name    string
	payload jsonValue
	bare    bool
}

func externalTag(path string, v jsonValue) (tagged, error) {
	switch {
	case v.kind == jsonString:
		return tagged{name: v.text, bare: true}, nil
	case v.kind != jsonObject:
		return tagged{}, typeError(path, v, "an enum (a variant name or a single-key object)")
	case len(v.members) != 1:
		return tagged{}, decodeErrorf(path, "expected exactly one variant key, found %d", len(v.members))
	}
	return tagged{name: v.members[0].key, payload: v.members[0].value}, nil
}

// readPayload reads the payload of a struct variant into struct v.
func (t tagged) readPayload(path string, v reflect.Value) error {
	switch {
	case t.bare:
		return decodeErrorf(path, "invalid type: unit variant, expected struct variant")
	case t.payload.kind != jsonObject:
		return typeError(path, t.payload, "an object")
	}
	return readFields(path, t.payload.members, v)
}

// unitOf checks that t is one of the unit variants names; serde_json accepts "Name" and
// {"Name": null}.
func (t tagged) unitOf(path string, names []string) error {
	switch {
	case !slices.Contains(names, t.name):
		return decodeErrorf(path, "unknown variant %q", truncate(t.name))
	case !t.bare && t.payload.kind != jsonNull:
		return typeError(path+"::"+t.name, t.payload, "unit variant (null)")
	}
	return nil
}

// writeUnit writes the unit variant name of enum, which must be one of names.
func writeUnit(w *jsonWriter, enum, name string, names []string) {
	if !slices.Contains(names, name) {
		w.fail("%s: unknown variant %q", enum, name)
		return
	}
	w.string(name)
}

// ---------------------------------------------------------------------------------------
// Errors and entry points

// codecError is a failed encode (kind ErrInvalidInput) or decode (kind ErrUndecodable), so
// that callers can classify it with errors.Is; the text names the value and the field.
type codecError struct {
	msg  string
	kind error
}

func (e *codecError) Error() string { return e.msg }

// Is reports whether target is the error's kind.
func (e *codecError) Is(target error) bool { return target == e.kind }

func decodeErrorf(path, format string, args ...any) error {
	return &codecError{msg: "duroxide: decode " + path + ": " + fmt.Sprintf(format, args...), kind: ErrUndecodable}
}

func encodeErrorf(what, format string, args ...any) error {
	return &codecError{msg: "duroxide: encode " + what + ": " + fmt.Sprintf(format, args...), kind: ErrInvalidInput}
}

func typeError(path string, v jsonValue, want string) error {
	return decodeErrorf(path, "invalid type: %s, expected %s", v.describe(), want)
}

// marshalWithContext runs write on a fresh writer and names what was being encoded in
// any error.
func marshalWithContext(what string, write func(*jsonWriter)) ([]byte, error) {
	w := &jsonWriter{}
	write(w)
	out, err := w.result()
	if err != nil {
		return nil, encodeErrorf(what, "%v", err)
	}
	return out, nil
}

// unmarshalInto parses data, decodes it with decode and stores the result in dst only on
// success, so a failed UnmarshalJSON never leaves a half-filled value behind.
func unmarshalInto[T any](data []byte, what string, decode func(path string, j jsonValue) (T, error), dst *T) error {
	root, err := parseJSON(what, data)
	if err != nil {
		return err
	}
	v, err := decode(what, root)
	if err != nil {
		return err
	}
	*dst = v
	return nil
}

// marshalValue and unmarshalValue serve the MarshalJSON / UnmarshalJSON methods of the
// error-details types, whose encoding is entirely described by their Go type.
func marshalValue[T any](x T) ([]byte, error) {
	return marshalWithContext(reflect.TypeFor[T]().Name(), func(w *jsonWriter) { encodeValue(w, reflect.ValueOf(x)) })
}

func unmarshalValue[T any](data []byte, dst *T) error {
	return unmarshalInto(data, reflect.TypeFor[T]().Name(), func(path string, j jsonValue) (T, error) {
		var x T
		err := decodeValue(path, j, reflect.ValueOf(&x).Elem())
		return x, err
	}, dst)
}
