package duroxide

import (
	"fmt"
	"reflect"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// This file holds the codec machinery shared by WorkItem, Event and ErrorDetails:
//
//   - a strict JSON parser producing a small value tree. encoding/json is not used for
//     decoding because it silently replaces invalid UTF-8 and lone surrogates, keeps the
//     last of duplicate keys and cannot tell "1" from "1.0" without extra work; serde_json
//     rejects all of these, and a reader of duroxide data must not accept what duroxide
//     itself would refuse.
//   - field readers ([fields], [required], [optional], [defaulted]) used by every variant
//     decoder, so "missing", "null" and "wrong type" are handled identically everywhere.
//   - a writer ([jsonWriter]) that emits serde_json's compact form byte for byte.

// ---------------------------------------------------------------------------------------
// Value tree

type jsonKind uint8

const (
	jsonNull jsonKind = iota
	jsonBool
	jsonNumber
	jsonString
	jsonArray
	jsonObject
)

// String names the kind the way serde's "invalid type" messages do.
func (k jsonKind) String() string {
	return [...]string{"null", "boolean", "number", "string", "array", "object"}[k]
}

// jsonValue is one parsed JSON value. Objects keep their members in input order so that
// duplicate keys can be detected.
type jsonValue struct {
	kind    jsonKind
	text    string // string contents, or the literal text of a number
	boolean bool
	items   []jsonValue
	members []jsonMember
}

type jsonMember struct {
	key   string
	value jsonValue
}

// describe renders v for error messages the way serde does ("string \"x\"", "number 1.5").
func (v jsonValue) describe() string {
	switch v.kind {
	case jsonString:
		return fmt.Sprintf("string %q", truncate(v.text))
	case jsonNumber:
		return "number " + truncate(v.text)
	case jsonBool:
		return "boolean " + strconv.FormatBool(v.boolean)
	default:
		return v.kind.String()
	}
}

func truncate(s string) string {
	const limit = 64
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "…"
}

// ---------------------------------------------------------------------------------------
// Parser

// maxJSONDepth mirrors serde_json's recursion limit: deeper input is rejected rather than
// risking a stack overflow on hostile data.
const maxJSONDepth = 128

type jsonParser struct {
	data  []byte
	pos   int
	depth int
}

// parseJSON parses exactly one JSON value; anything but whitespace after it is an error.
// what names the expected value in error messages.
func parseJSON(what string, data []byte) (jsonValue, error) {
	p := &jsonParser{data: data}
	v, err := p.value()
	if err == nil {
		p.skipSpace()
		if p.pos != len(p.data) {
			err = p.errorf("trailing characters after JSON value")
		}
	}
	if err != nil {
		return jsonValue{}, fmt.Errorf("duroxide: decode %s: %w", what, err)
	}
	return v, nil
}

func (p *jsonParser) errorf(format string, args ...any) error {
	return fmt.Errorf("invalid JSON at offset %d: %s", p.pos, fmt.Sprintf(format, args...))
}

func (p *jsonParser) skipSpace() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// consume skips whitespace and then the byte c if it is next.
func (p *jsonParser) consume(c byte) bool {
	p.skipSpace()
	return p.accept(c)
}

// accept skips the byte c if it is next (no whitespace skipping).
func (p *jsonParser) accept(c byte) bool {
	if p.pos < len(p.data) && p.data[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

func (p *jsonParser) value() (jsonValue, error) {
	p.skipSpace()
	if p.pos >= len(p.data) {
		return jsonValue{}, p.errorf("unexpected end of input")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.string()
		return jsonValue{kind: jsonString, text: s}, err
	case c == 't':
		return p.literal("true", jsonValue{kind: jsonBool, boolean: true})
	case c == 'f':
		return p.literal("false", jsonValue{kind: jsonBool})
	case c == 'n':
		return p.literal("null", jsonValue{kind: jsonNull})
	case c == '-' || isDigit(c):
		return p.number()
	default:
		return jsonValue{}, p.errorf("unexpected character %q", c)
	}
}

func (p *jsonParser) literal(word string, v jsonValue) (jsonValue, error) {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return jsonValue{}, p.errorf("invalid literal, expected %s", word)
	}
	p.pos += len(word)
	return v, nil
}

func (p *jsonParser) enter() error {
	p.depth++
	if p.depth >= maxJSONDepth {
		return p.errorf("recursion limit exceeded")
	}
	return nil
}

func (p *jsonParser) object() (jsonValue, error) {
	if err := p.enter(); err != nil {
		return jsonValue{}, err
	}
	defer func() { p.depth-- }()
	p.pos++ // '{'
	v := jsonValue{kind: jsonObject}
	if p.consume('}') {
		return v, nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return jsonValue{}, p.errorf("expected object key")
		}
		key, err := p.string()
		if err != nil {
			return jsonValue{}, err
		}
		if !p.consume(':') {
			return jsonValue{}, p.errorf("expected ':'")
		}
		member, err := p.value()
		if err != nil {
			return jsonValue{}, err
		}
		v.members = append(v.members, jsonMember{key: key, value: member})
		if p.consume(',') {
			continue
		}
		if p.consume('}') {
			return v, nil
		}
		return jsonValue{}, p.errorf("expected ',' or '}'")
	}
}

func (p *jsonParser) array() (jsonValue, error) {
	if err := p.enter(); err != nil {
		return jsonValue{}, err
	}
	defer func() { p.depth-- }()
	p.pos++ // '['
	v := jsonValue{kind: jsonArray}
	if p.consume(']') {
		return v, nil
	}
	for {
		item, err := p.value()
		if err != nil {
			return jsonValue{}, err
		}
		v.items = append(v.items, item)
		if p.consume(',') {
			continue
		}
		if p.consume(']') {
			return v, nil
		}
		return jsonValue{}, p.errorf("expected ',' or ']'")
	}
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// digits skips a run of ASCII digits and reports how many there were.
func (p *jsonParser) digits() int {
	start := p.pos
	for p.pos < len(p.data) && isDigit(p.data[p.pos]) {
		p.pos++
	}
	return p.pos - start
}

// number validates RFC 8259 number syntax and keeps the literal; conversion happens in
// the field readers, which know whether a u64 or a u32 is wanted.
func (p *jsonParser) number() (jsonValue, error) {
	start := p.pos
	p.accept('-')
	if !p.accept('0') && p.digits() == 0 {
		return jsonValue{}, p.errorf("invalid number")
	}
	if p.accept('.') && p.digits() == 0 {
		return jsonValue{}, p.errorf("invalid number: no digits after '.'")
	}
	if p.accept('e') || p.accept('E') {
		if !p.accept('+') {
			p.accept('-')
		}
		if p.digits() == 0 {
			return jsonValue{}, p.errorf("invalid number: no digits in exponent")
		}
	}
	return jsonValue{kind: jsonNumber, text: string(p.data[start:p.pos])}, nil
}

// string parses a JSON string starting at the opening quote. Raw control characters,
// invalid UTF-8, unknown escapes and unpaired surrogates are errors, as in serde_json.
func (p *jsonParser) string() (string, error) {
	p.pos++ // opening quote
	var out []byte
	start := p.pos
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			chunk := p.data[start:p.pos]
			if !utf8.Valid(chunk) {
				return "", p.errorf("invalid UTF-8 in string")
			}
			p.pos++
			if out == nil {
				return string(chunk), nil
			}
			return string(append(out, chunk...)), nil
		case c == '\\':
			chunk := p.data[start:p.pos]
			if !utf8.Valid(chunk) {
				return "", p.errorf("invalid UTF-8 in string")
			}
			var err error
			if out, err = p.escape(append(out, chunk...)); err != nil {
				return "", err
			}
			start = p.pos
		case c < 0x20:
			return "", p.errorf("control character %#02x in string", c)
		default:
			p.pos++
		}
	}
	return "", p.errorf("unexpected end of input in string")
}

// escape decodes one escape sequence starting at the backslash and appends it to out.
func (p *jsonParser) escape(out []byte) ([]byte, error) {
	p.pos++ // backslash
	if p.pos >= len(p.data) {
		return nil, p.errorf("unexpected end of input in escape")
	}
	c := p.data[p.pos]
	p.pos++
	if simple, ok := simpleEscapes[c]; ok {
		return append(out, simple), nil
	}
	if c != 'u' {
		return nil, p.errorf("invalid escape %q", c)
	}
	r, err := p.hex4()
	if err != nil {
		return nil, err
	}
	if utf16.IsSurrogate(r) {
		if r, err = p.lowSurrogate(r); err != nil {
			return nil, err
		}
	}
	return utf8.AppendRune(out, r), nil
}

var simpleEscapes = map[byte]byte{
	'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t',
}

// lowSurrogate completes a UTF-16 surrogate pair whose high half is high.
func (p *jsonParser) lowSurrogate(high rune) (rune, error) {
	if high >= 0xDC00 {
		return 0, p.errorf("lone trailing surrogate in escape")
	}
	if len(p.data)-p.pos < 2 || p.data[p.pos] != '\\' || p.data[p.pos+1] != 'u' {
		return 0, p.errorf("lone leading surrogate in escape")
	}
	p.pos += 2
	low, err := p.hex4()
	if err != nil {
		return 0, err
	}
	if low < 0xDC00 || low > 0xDFFF {
		return 0, p.errorf("invalid low surrogate in escape")
	}
	return utf16.DecodeRune(high, low), nil
}

func (p *jsonParser) hex4() (rune, error) {
	if len(p.data)-p.pos < 4 {
		return 0, p.errorf("unexpected end of input in \\u escape")
	}
	n, err := strconv.ParseUint(string(p.data[p.pos:p.pos+4]), 16, 32)
	if err != nil {
		return 0, p.errorf("invalid \\u escape")
	}
	p.pos += 4
	return rune(n), nil
}

// ---------------------------------------------------------------------------------------
// Field readers

func decodeErrorf(path, format string, args ...any) error {
	return fmt.Errorf("duroxide: decode %s: %s", path, fmt.Sprintf(format, args...))
}

func typeError(path string, v jsonValue, want string) error {
	return decodeErrorf(path, "invalid type: %s, expected %s", v.describe(), want)
}

// converter turns a present, possibly null, JSON value into T. path names the value in
// error messages (e.g. "WorkItem::ActivityExecute.execution_id").
type converter[T any] func(path string, v jsonValue) (T, error)

// fields reads the members of one JSON object. The first error is kept and later reads
// return zero values, so a variant decoder is a single struct literal followed by one
// error check.
type fields struct {
	path    string
	members []jsonMember
	err     error
}

func objectFields(path string, v jsonValue) (*fields, error) {
	if v.kind != jsonObject {
		return nil, typeError(path, v, "an object")
	}
	return &fields{path: path, members: v.members}, nil
}

func (f *fields) fail(err error) {
	if f.err == nil && err != nil {
		f.err = err
	}
}

// lookup finds key. A known field given twice is an error, as in serde; keys nobody asks
// for are ignored.
func (f *fields) lookup(key string) (jsonValue, bool) {
	var found jsonValue
	n := 0
	for _, m := range f.members {
		if m.key == key {
			found = m.value
			n++
		}
	}
	if n > 1 {
		f.fail(decodeErrorf(f.path, "duplicate field %q", key))
	}
	return found, n > 0
}

func convert[T any](f *fields, key string, v jsonValue, conv converter[T]) T {
	t, err := conv(f.path+"."+key, v)
	f.fail(err)
	return t
}

// required reads a field that must be present; null is passed to conv, which rejects it
// unless T itself accepts null.
func required[T any](f *fields, key string, conv converter[T]) T {
	v, ok := f.lookup(key)
	if !ok {
		f.fail(decodeErrorf(f.path, "missing field %q", key))
		var zero T
		return zero
	}
	return convert(f, key, v, conv)
}

// optional reads a serde Option: missing and null both mean None (nil).
func optional[T any](f *fields, key string, conv converter[T]) *T {
	v, ok := f.lookup(key)
	if !ok || v.kind == jsonNull {
		return nil
	}
	t := convert(f, key, v, conv)
	return &t
}

// defaulted reads a #[serde(default)] field: missing means the zero value, but an explicit
// null is still a type error.
func defaulted[T any](f *fields, key string, conv converter[T]) T {
	v, ok := f.lookup(key)
	if !ok {
		var zero T
		return zero
	}
	return convert(f, key, v, conv)
}

func (f *fields) str(key string) string           { return required(f, key, asString) }
func (f *fields) u64(key string) uint64           { return required(f, key, asU64) }
func (f *fields) u32(key string) uint32           { return required(f, key, asU32) }
func (f *fields) boolean(key string) bool         { return required(f, key, asBool) }
func (f *fields) optStr(key string) *string       { return optional(f, key, asString) }
func (f *fields) optU64(key string) *uint64       { return optional(f, key, asU64) }
func (f *fields) details(key string) ErrorDetails { return required(f, key, decodeErrorDetails) }

func asString(path string, v jsonValue) (string, error) {
	if v.kind != jsonString {
		return "", typeError(path, v, "a string")
	}
	return v.text, nil
}

func asBool(path string, v jsonValue) (bool, error) {
	if v.kind != jsonBool {
		return false, typeError(path, v, "a boolean")
	}
	return v.boolean, nil
}

func asU64(path string, v jsonValue) (uint64, error) { return asUint(path, v, 64) }

func asU32(path string, v jsonValue) (uint32, error) {
	n, err := asUint(path, v, 32)
	return uint32(n), err
}

// asUint accepts only a plain non-negative integer literal that fits in bits: serde never
// writes floats, exponents or negative numbers for unsigned fields and refuses to read them.
func asUint(path string, v jsonValue, bits int) (uint64, error) {
	want := fmt.Sprintf("u%d", bits)
	if v.kind != jsonNumber {
		return 0, typeError(path, v, want)
	}
	n, err := strconv.ParseUint(v.text, 10, bits)
	if err != nil {
		return 0, decodeErrorf(path, "invalid value: %s, expected %s", v.describe(), want)
	}
	return n, nil
}

// asPairs reads a Vec<(String, String)>. An empty list decodes to a nil slice so that
// "missing" and "[]" yield the same Go value and round trips are stable.
func asPairs(path string, v jsonValue) ([][2]string, error) {
	if v.kind != jsonArray {
		return nil, typeError(path, v, "a list of [name, data] pairs")
	}
	var out [][2]string
	for i, item := range v.items {
		itemPath := fmt.Sprintf("%s[%d]", path, i)
		if item.kind != jsonArray || len(item.items) != 2 {
			return nil, typeError(itemPath, item, "a 2-element array")
		}
		var pair [2]string
		for j := range pair {
			s, err := asString(fmt.Sprintf("%s[%d]", itemPath, j), item.items[j])
			if err != nil {
				return nil, err
			}
			pair[j] = s
		}
		out = append(out, pair)
	}
	return out, nil
}

// ---------------------------------------------------------------------------------------
// Externally tagged enums

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

// fields opens the payload of a struct variant.
func (t tagged) fields(path string) (*fields, error) {
	if t.bare {
		return nil, decodeErrorf(path, "invalid type: unit variant, expected struct variant")
	}
	return objectFields(path, t.payload)
}

// unit checks the payload of a unit variant: serde_json accepts "Name" and {"Name": null}.
func (t tagged) unit(path string) error {
	if !t.bare && t.payload.kind != jsonNull {
		return typeError(path, t.payload, "unit variant (null)")
	}
	return nil
}

// decodeTagged decodes an externally tagged enum whose variants are all structs, using
// one reader per variant name.
func decodeTagged[T any](path string, v jsonValue, readers map[string]func(*fields) T) (T, error) {
	var zero T
	t, err := externalTag(path, v)
	if err != nil {
		return zero, err
	}
	read, ok := readers[t.name]
	if !ok {
		return zero, decodeErrorf(path, "unknown variant %q", truncate(t.name))
	}
	f, err := t.fields(path + "::" + t.name)
	if err != nil {
		return zero, err
	}
	out := read(f)
	if f.err != nil {
		return zero, f.err
	}
	return out, nil
}

// variantReaders indexes the readers of a struct-variant enum by wire name, so that the
// name and the field layout of each variant are defined once, on the variant's own type.
func variantReaders[C any, T any](name func(C) string, read func(C, *fields) T, protos []C) map[string]func(*fields) T {
	readers := make(map[string]func(*fields) T, len(protos))
	for _, proto := range protos {
		readers[name(proto)] = func(f *fields) T { return read(proto, f) }
	}
	return readers
}

// ---------------------------------------------------------------------------------------
// Writer

// structVariant is one struct variant of an externally tagged enum, able to write itself.
type structVariant interface {
	variant() string
	writeFields(w *jsonWriter)
}

// jsonWriter appends serde_json's compact encoding. Keys are written in call order, which
// every writeFields keeps identical to the Rust declaration order. The first error is kept.
type jsonWriter struct {
	buf     []byte
	first   bool // the next key is the first member of the current object
	lastKey string
	err     error
}

func (w *jsonWriter) fail(format string, args ...any) {
	if w.err == nil {
		w.err = fmt.Errorf(format, args...)
	}
}

func (w *jsonWriter) result() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	return w.buf, nil
}

func (w *jsonWriter) open() {
	w.buf = append(w.buf, '{')
	w.first = true
}

func (w *jsonWriter) close() {
	w.buf = append(w.buf, '}')
	w.first = false
}

func (w *jsonWriter) key(k string) {
	if !w.first {
		w.buf = append(w.buf, ',')
	}
	w.first = false
	w.lastKey = k
	w.string(k)
	w.buf = append(w.buf, ':')
}

const lowerHex = "0123456789abcdef"

// string writes s escaped exactly like serde_json: only '"', '\\' and control characters
// are escaped (short forms where JSON has them, otherwise \u00xx in lowercase hex);
// '<', '>', '&', U+2028 and U+2029 stay raw. Rust strings are always valid UTF-8, so a Go
// string that is not cannot have come from duroxide and is refused.
func (w *jsonWriter) string(s string) {
	if !utf8.ValidString(s) {
		w.fail("field %q: string is not valid UTF-8", w.lastKey)
		return
	}
	w.buf = append(w.buf, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		w.buf = append(w.buf, s[start:i]...)
		switch c {
		case '"', '\\':
			w.buf = append(w.buf, '\\', c)
		case '\b':
			w.buf = append(w.buf, '\\', 'b')
		case '\f':
			w.buf = append(w.buf, '\\', 'f')
		case '\n':
			w.buf = append(w.buf, '\\', 'n')
		case '\r':
			w.buf = append(w.buf, '\\', 'r')
		case '\t':
			w.buf = append(w.buf, '\\', 't')
		default:
			w.buf = append(w.buf, '\\', 'u', '0', '0', lowerHex[c>>4], lowerHex[c&0xf])
		}
		start = i + 1
	}
	w.buf = append(w.buf, s[start:]...)
	w.buf = append(w.buf, '"')
}

func (w *jsonWriter) null() { w.buf = append(w.buf, "null"...) }

func (w *jsonWriter) str(k, v string) {
	w.key(k)
	w.string(v)
}

func (w *jsonWriter) u64(k string, v uint64) {
	w.key(k)
	w.buf = strconv.AppendUint(w.buf, v, 10)
}

func (w *jsonWriter) boolean(k string, v bool) {
	w.key(k)
	w.buf = strconv.AppendBool(w.buf, v)
}

// nullableStr writes an Option<String> without skip_serializing_if: None is null.
func (w *jsonWriter) nullableStr(k string, v *string) {
	if v == nil {
		w.key(k)
		w.null()
		return
	}
	w.str(k, *v)
}

// omittableStr writes an Option<String> with skip_serializing_if = "Option::is_none".
func (w *jsonWriter) omittableStr(k string, v *string) {
	if v != nil {
		w.str(k, *v)
	}
}

func (w *jsonWriter) nullableU64(k string, v *uint64) {
	if v == nil {
		w.key(k)
		w.null()
		return
	}
	w.u64(k, *v)
}

func (w *jsonWriter) pairs(k string, pairs [][2]string) {
	w.key(k)
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

// tagged writes {"Variant":{fields}}.
func (w *jsonWriter) tagged(v structVariant) {
	w.open()
	w.key(v.variant())
	w.open()
	v.writeFields(w)
	w.close()
	w.close()
}

// oneOf writes the single set variant of a pointer-field union (ErrorDetails,
// PoisonMessageType); zero or several set variants cannot be represented in serde's
// format and are an error rather than a silent pick.
func (w *jsonWriter) oneOf(union string, set []structVariant) {
	if len(set) != 1 {
		w.fail("%s: exactly one variant must be set, found %d", union, len(set))
		return
	}
	w.tagged(set[0])
}

// marshal runs write on a fresh writer.
func marshal(write func(*jsonWriter)) ([]byte, error) {
	w := &jsonWriter{}
	write(w)
	return w.result()
}

// isNilPointer reports whether x is a typed nil pointer stored in an interface; calling a
// value-receiver method on it would panic.
func isNilPointer(x any) bool {
	v := reflect.ValueOf(x)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
