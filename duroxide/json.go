package duroxide

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// Decoding parses into a small value tree first, because serde reads an event's "type" tag
// wherever it stands among the fields. jsontext checks the syntax as strictly as
// serde_json does (no invalid UTF-8, lone surrogates, unknown escapes, raw control
// characters or non-RFC 8259 numbers); encoding/json is not used because it replaces
// invalid UTF-8 silently and keeps the last of duplicate keys. (The standard library's
// encoding/json/jsontext needs GOEXPERIMENT=jsonv2 in Go 1.26.)

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

// maxJSONDepth mirrors serde_json's recursion limit: deeper input is rejected rather than
// risking a stack overflow on hostile data.
const maxJSONDepth = 128

// decoders are pooled: a fresh decoder per call was a tenth of the bytes that decoding a
// history event allocates.
var decoders = sync.Pool{New: func() any { return new(jsontext.Decoder) }}

// parseJSON parses exactly one JSON value; anything but whitespace after it is an error.
// what names the expected value in error messages.
func parseJSON(what string, data []byte) (jsonValue, error) {
	d := decoders.Get().(*jsontext.Decoder)
	defer decoders.Put(d)
	// Duplicate keys are allowed here: serde rejects only declared fields given twice,
	// which the field decoder checks.
	d.Reset(bytes.NewBuffer(data), jsontext.AllowDuplicateNames(true))
	v, err := readJSON(d)
	if err == nil {
		if _, err = d.ReadToken(); err == io.EOF {
			return v, nil
		}
		err = errors.New("trailing characters after JSON value")
	}
	offset := d.InputOffset()
	var syntax *jsontext.SyntacticError
	if errors.As(err, &syntax) {
		offset, err = syntax.ByteOffset, syntax.Err
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		err = errors.New("unexpected end of input")
	}
	return jsonValue{}, decodeErrorf(what, "invalid JSON at offset %d: %v", offset, err)
}

// readJSON reads the next value from d.
func readJSON(d *jsontext.Decoder) (jsonValue, error) {
	tok, err := d.ReadToken()
	if err != nil {
		return jsonValue{}, err
	}
	switch tok.Kind() {
	case 'n':
		return jsonValue{kind: jsonNull}, nil
	case 't', 'f':
		return jsonValue{kind: jsonBool, boolean: tok.Bool()}, nil
	case '"':
		return jsonValue{kind: jsonString, text: tok.String()}, nil
	case '0': // the literal, converted by the field decoder that knows the wanted type
		return jsonValue{kind: jsonNumber, text: tok.String()}, nil
	}
	if d.StackDepth() >= maxJSONDepth {
		return jsonValue{}, errors.New("recursion limit exceeded")
	}
	v := jsonValue{kind: jsonArray}
	if tok.Kind() == '{' {
		v.kind = jsonObject
	}
	for k := d.PeekKind(); k != ']' && k != '}'; k = d.PeekKind() {
		var key string
		if v.kind == jsonObject {
			if tok, err = d.ReadToken(); err != nil {
				return jsonValue{}, err
			}
			key = tok.String() // a token is valid only until the next read
		}
		item, err := readJSON(d)
		if err != nil {
			return jsonValue{}, err
		}
		if v.kind == jsonObject {
			v.members = append(v.members, jsonMember{key: key, value: item})
		} else {
			v.items = append(v.items, item)
		}
	}
	_, err = d.ReadToken() // the closing bracket
	return v, err
}

// ---------------------------------------------------------------------------------------
// Writer

// jsonWriter appends serde_json's compact encoding. Keys are written in call order, which
// the codec keeps identical to the Rust declaration order. The first error is kept.
type jsonWriter struct {
	buf     []byte
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

// key writes a member's key, after a comma unless it opens the object. Keys are dx tags
// and variant names, plain identifiers that need no escaping.
func (w *jsonWriter) key(k string) {
	if len(w.buf) > 0 && w.buf[len(w.buf)-1] != '{' {
		w.buf = append(w.buf, ',')
	}
	w.lastKey = k
	w.buf = append(append(append(w.buf, '"'), k...), '"', ':')
}

// string writes s escaped exactly like serde_json: only '"', '\\' and control characters
// are escaped (short forms where JSON has them, otherwise \u00xx in lowercase hex);
// '<', '>', '&', U+2028 and U+2029 stay raw. Rust strings are always valid UTF-8, so a Go
// string that is not cannot have come from duroxide and is refused.
func (w *jsonWriter) string(s string) {
	out, err := jsontext.AppendQuote(w.buf, s)
	if err != nil {
		w.fail("field %q: string is not valid UTF-8", w.lastKey)
		return
	}
	w.buf = out
}
