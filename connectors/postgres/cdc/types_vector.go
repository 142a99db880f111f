package cdc

import (
	"strings"

	"github.com/fjordhq/fjord/connect"
)

// pgvector's vector, halfvec and sparsevec, as Debezium's DoubleVector,
// FloatVector and SparseDoubleVector read their text ("[1,2,3]",
// "{1:1.5,3:2}/5").

const (
	dbzDoubleVector = "io.debezium.data.DoubleVector"
	dbzFloatVector  = "io.debezium.data.FloatVector"
	dbzSparseVector = "io.debezium.data.SparseDoubleVector"
)

func vectorMapping(half bool) *mapping {
	elem, name, bits := connect.Float64Schema, dbzDoubleVector, 64
	if half {
		elem, name, bits = connect.Float32Schema, dbzFloatVector, 32
	}
	return &mapping{
		schema:   func() *connect.SchemaBuilder { return connect.NewArray(elem).Name(name).Version(1) },
		fallback: []any{}, toastErr: errToastType,
		dec: func(b []byte, _ *arena) (any, error) {
			s := strings.TrimSpace(string(b))
			if !strings.HasPrefix(s, "[") || !strings.HasSuffix(s, "]") {
				return nil, errSyntax
			}
			parts := strings.Split(s[1:len(s)-1], ",")
			out := make([]any, len(parts))
			for i, p := range parts {
				f, err := parseFloat([]byte(strings.TrimSpace(p)), bits)
				if err != nil {
					return nil, convFailure("Cannot convert vector %s", s)
				}
				if half {
					out[i] = float32(f)
				} else {
					out[i] = f
				}
			}
			return out, nil
		},
	}
}

func sparseVectorSchema() *connect.SchemaBuilder {
	return connect.NewStruct().Name(dbzSparseVector).Version(1).Doc("Sparse double vector").
		Field("dimensions", connect.Int16Schema).
		Field("vector", connect.NewMap(connect.Int16Schema, connect.Float64Schema).Build())
}

func sparseVectorMapping() *mapping {
	var schema *connect.Schema
	m := &mapping{schema: sparseVectorSchema, toastErr: errToastType}
	m.bind = func(s *connect.Schema) {
		schema = s
		m.fallback = nil // Debezium's fallback is an empty list, which no struct field accepts
	}
	m.dec = func(b []byte, _ *arena) (any, error) {
		s := strings.TrimSpace(string(b))
		parts := strings.Split(s, "/")
		if len(parts) != 2 {
			return nil, errSyntax
		}
		dims, err := parseInt([]byte(strings.TrimSpace(parts[1])), 16)
		if err != nil {
			return nil, errSyntax
		}
		v := strings.TrimSpace(parts[0])
		if !strings.HasPrefix(v, "{") || !strings.HasSuffix(v, "}") {
			return nil, errSyntax
		}
		vec := map[any]any{}
		if v = strings.TrimSpace(v[1 : len(v)-1]); v != "" {
			for _, e := range strings.Split(v, ",") {
				kv := strings.Split(e, ":")
				if len(kv) != 2 {
					return nil, errSyntax
				}
				k, err := parseInt([]byte(strings.TrimSpace(kv[0])), 16)
				if err != nil {
					return nil, errSyntax
				}
				f, err := parseFloat([]byte(strings.TrimSpace(kv[1])), 64)
				if err != nil {
					return nil, errSyntax
				}
				vec[int16(k)] = f
			}
		}
		st := connect.NewStructValue(schema)
		st.PutFieldUnchecked(&schema.Fields[0], int16(dims))
		st.PutFieldUnchecked(&schema.Fields[1], vec)
		return st, nil
	}
	return m
}
