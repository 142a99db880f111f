package schemaregistry

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The _schemas topic holds Confluent's records, key and value as JSON,
// so a Confluent Schema Registry pointed at the same topic reads what
// Fjord wrote and the other way round:
//
//	{"keytype":"SCHEMA","subject":"s","version":1,"magic":1} → {"subject":"s","version":1,"id":1,"schema":"…","deleted":false}
//	{"keytype":"CONFIG","subject":"s","magic":0}             → {"subject":"s","compatibilityLevel":"FULL"}
//	{"keytype":"MODE","subject":"s","magic":0}               → {"subject":"s","mode":"READONLY"}
//	{"keytype":"DELETE_SUBJECT","subject":"s","magic":0}     → {"subject":"s","version":3}
//	{"keytype":"CLEAR_SUBJECT","subject":"s","magic":0}      → {"subject":"s"}
//	{"keytype":"NOOP","magic":0}                             → null
//
// A null value is a tombstone (permanent delete). The global config and
// mode have no subject.
const (
	keySchema        = "SCHEMA"
	keyConfig        = "CONFIG"
	keyMode          = "MODE"
	keyDeleteSubject = "DELETE_SUBJECT"
	keyClearSubject  = "CLEAR_SUBJECT"
	keyNoop          = "NOOP"
)

// recordKey is a _schemas key. Field order is Confluent's
// (@JsonPropertyOrder keytype, subject, version, magic).
type recordKey struct {
	KeyType string  `json:"keytype"`
	Subject *string `json:"subject,omitempty"`
	Version int     `json:"version,omitempty"`
	Magic   int     `json:"magic"`
}

func schemaKey(subject string, version int) recordKey {
	return recordKey{KeyType: keySchema, Subject: &subject, Version: version, Magic: 1}
}

func subjectKey(keyType, subject string) recordKey {
	k := recordKey{KeyType: keyType}
	if subject != "" {
		k.Subject = &subject
	}
	return k
}

func (k recordKey) subject() string {
	if k.Subject == nil {
		return ""
	}
	return *k.Subject
}

// schemaValue is a SCHEMA record's value (Confluent's SchemaValue).
// schemaType is omitted for AVRO, as Confluent Platform 7 writes it.
type schemaValue struct {
	Subject    string      `json:"subject"`
	Version    int         `json:"version"`
	ID         int         `json:"id"`
	SchemaType string      `json:"schemaType,omitempty"`
	References []reference `json:"references,omitempty"`
	Schema     string      `json:"schema"`
	Deleted    bool        `json:"deleted"`
}

type reference struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

type configValue struct {
	Subject            string `json:"subject,omitempty"`
	CompatibilityLevel string `json:"compatibilityLevel,omitempty"`
}

type modeValue struct {
	Subject string `json:"subject,omitempty"`
	Mode    string `json:"mode"`
}

type deleteSubjectValue struct {
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

type clearSubjectValue struct {
	Subject string `json:"subject"`
}

// Record is one _schemas record; a nil Value is a tombstone.
type Record struct {
	Key, Value []byte
	Offset     int64
}

func encodeRecord(k recordKey, v any) (Record, error) {
	kb, err := marshal(k)
	if err != nil {
		return Record{}, fmt.Errorf("encode key: %w", err)
	}
	if v == nil {
		return Record{Key: kb}, nil
	}
	vb, err := marshal(v)
	if err != nil {
		return Record{}, fmt.Errorf("encode value: %w", err)
	}
	return Record{Key: kb, Value: vb}, nil
}

// marshal is json.Marshal without HTML escaping (Jackson writes < > &
// as they are) and without the trailing newline.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
