package format

import (
	"fmt"
	"strings"
)

// Confluent's format classes.
const (
	jsonClass      = "io.confluent.connect.s3.format.json.JsonFormat"
	avroClass      = "io.confluent.connect.s3.format.avro.AvroFormat"
	parquetClass   = "io.confluent.connect.s3.format.parquet.ParquetFormat"
	byteArrayClass = "io.confluent.connect.s3.format.bytearray.ByteArrayFormat"

	jsonName      = "JsonFormat"
	avroName      = "AvroFormat"
	parquetName   = "ParquetFormat"
	byteArrayName = "ByteArrayFormat"
)

// Classes lists the format.class values New accepts (each also by its
// simple name).
var Classes = []string{avroClass, jsonClass, parquetClass, byteArrayClass}

// lookup returns the simple name of a format class.
func lookup(class string) (string, error) {
	c := strings.TrimSpace(class)
	for _, full := range Classes {
		simple := full[strings.LastIndexByte(full, '.')+1:]
		if c == full || c == simple {
			return simple, nil
		}
	}
	return "", fmt.Errorf("Invalid value %s for format class: Fjord's S3 connectors read and write %s (or their simple names)",
		class, strings.Join(Classes, ", "))
}

// New returns the format of a format.class (Confluent's full class name
// or its simple name) configured by the format keys of props (nil for
// the defaults).
func New(class string, props map[string]string) (Format, error) {
	name, err := lookup(class)
	if err != nil {
		return nil, err
	}
	s, err := parseSettings(props, name)
	if err != nil {
		return nil, err
	}
	switch name {
	case jsonName:
		return newJSON(s), nil
	case avroName:
		return &avroFormat{s: s}, nil
	case parquetName:
		return newParquet(s)
	default:
		return &byteArrayFormat{s: s}, nil
	}
}
