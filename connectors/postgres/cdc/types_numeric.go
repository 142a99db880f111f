package cdc

import (
	"fmt"
	"math/big"
	"strconv"

	"github.com/fjordhq/fjord/connect"
)

// numeric and money, as Debezium's decimal.handling.mode maps them.

// numericSpec is a numeric column's modifiers as pgjdbc reports them.
type numericSpec struct {
	length, scale int32
}

// variable: numeric without precision, which Debezium's precise mode
// carries as a VariableScaleDecimal struct.
func (n numericSpec) variable() bool {
	return (n.length == 0 || n.length == variableScaleLength) && n.scale == 0
}

// adjust is Debezium's withScaleAdjustedIfNeeded (JdbcValueConverters and
// PostgresValueConverter): the scale raised to the column's, then set to
// it for numerics of fixed precision. Lowering it fails when digits would
// be lost, as BigDecimal.setScale without rounding does.
func (n numericSpec) adjust(d connect.Decimal) (connect.Decimal, error) {
	if n.scale > d.Scale {
		d = rescale(d, n.scale)
	}
	if n.length != variableScaleLength && d.Scale != n.scale {
		if n.scale > d.Scale {
			return rescale(d, n.scale), nil
		}
		r, exact := rescaleDown(d, n.scale, false)
		if !exact {
			return d, convFailure("Rounding necessary: %s does not fit scale %d", d, n.scale)
		}
		return r, nil
	}
	return d, nil
}

var bigTen = big.NewInt(10)

// smallPow10 are 10^0..10^18, shared read-only (math/big never writes
// its operands).
var smallPow10 = func() []*big.Int {
	p := make([]*big.Int, 19)
	n := int64(1)
	for i := range p {
		p[i] = big.NewInt(n)
		n *= 10
	}
	return p
}()

func pow10(n int32) *big.Int {
	if n >= 0 && int(n) < len(smallPow10) {
		return smallPow10[n]
	}
	return new(big.Int).Exp(bigTen, big.NewInt(int64(n)), nil)
}

// rescale raises d's scale to s (s >= d.Scale).
func rescale(d connect.Decimal, s int32) connect.Decimal {
	u := new(big.Int).Mul(d.Unscaled, pow10(s-d.Scale))
	return connect.Decimal{Unscaled: u, Scale: s}
}

// rescaleDown lowers d's scale to s; with halfUp it rounds as
// RoundingMode.HALF_UP, otherwise it reports whether no digit was lost.
func rescaleDown(d connect.Decimal, s int32, halfUp bool) (connect.Decimal, bool) {
	div := pow10(d.Scale - s)
	q, r := new(big.Int).QuoRem(d.Unscaled, div, new(big.Int))
	exact := r.Sign() == 0
	if halfUp && !exact {
		// |r|*2 >= div rounds away from zero.
		if new(big.Int).Mul(new(big.Int).Abs(r), big.NewInt(2)).Cmp(div) >= 0 {
			if d.Unscaled.Sign() < 0 {
				q.Sub(q, big.NewInt(1))
			} else {
				q.Add(q, big.NewInt(1))
			}
		}
	}
	return connect.Decimal{Unscaled: q, Scale: s}, exact
}

// stripTrailingZeros is BigDecimal.stripTrailingZeros (zero becomes scale
// 0, as since Java 8), then a negative scale set back to 0, as Debezium
// does for VariableScaleDecimal.
func stripTrailingZeros(d connect.Decimal) connect.Decimal {
	if d.Unscaled.Sign() == 0 {
		return connect.Decimal{Unscaled: new(big.Int), Scale: 0}
	}
	u := new(big.Int).Set(d.Unscaled)
	s := d.Scale
	q, r := new(big.Int), new(big.Int)
	for {
		q.QuoRem(u, bigTen, r)
		if r.Sign() != 0 {
			break
		}
		u, q = q, u
		s--
	}
	if s < 0 {
		u.Mul(u, pow10(-s))
		s = 0
	}
	return connect.Decimal{Unscaled: u, Scale: s}
}

// decimalFloat is BigDecimal.doubleValue (correctly rounded).
func decimalFloat(d connect.Decimal) float64 {
	f, _ := strconv.ParseFloat(d.String(), 64)
	return f
}

// parseNumericText reads numeric output; special is "NaN", "Infinity" or
// "-Infinity" for PostgreSQL's special values.
func parseNumericText(b []byte) (d connect.Decimal, special string, err error) {
	switch string(b) {
	case "NaN", "Infinity", "-Infinity":
		return d, string(b), nil
	}
	if d, ok := parseSmallDecimal(b); ok {
		return d, "", nil
	}
	// numeric_out never writes exponents; refusing them also keeps a
	// scale of 10^9 digits from ever being built.
	for _, c := range b {
		if !(c >= '0' && c <= '9' || c == '.' || c == '-') {
			return d, "", errSyntax
		}
	}
	d, err = connect.ParseDecimal(string(b))
	if err != nil {
		return d, "", errSyntax
	}
	return d, "", nil
}

// parseSmallDecimal reads "-123.45" with up to 18 digits without going
// through strings (the common case, and the one worth not allocating
// for).
func parseSmallDecimal(b []byte) (connect.Decimal, bool) {
	i := 0
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		i = 1
	}
	var u int64
	digits, scale := 0, int32(-1)
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			u = u*10 + int64(c-'0')
			digits++
			if scale >= 0 {
				scale++
			}
		case c == '.' && scale < 0 && digits > 0:
			scale = 0
		default:
			return connect.Decimal{}, false
		}
		if digits > 18 {
			return connect.Decimal{}, false
		}
	}
	if digits == 0 || scale == 0 {
		return connect.Decimal{}, false
	}
	if scale < 0 {
		scale = 0
	}
	if neg {
		u = -u
	}
	return connect.Decimal{Unscaled: big.NewInt(u), Scale: scale}, true
}

// specialName is SpecialValueDecimal.toString of a special value (what
// string mode emits for it).
func specialName(s string) string {
	switch s {
	case "NaN":
		return "NAN"
	case "Infinity":
		return "POSITIVE_INFINITY"
	}
	return "NEGATIVE_INFINITY"
}

func specialFloat(s string) float64 {
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// vsdSchema builds Debezium's VariableScaleDecimal struct schema.
func vsdSchema() *connect.SchemaBuilder {
	return connect.NewStruct().Name(dbzVarDecimal).Version(1).Doc("Variable scaled decimal").
		Field("scale", connect.Int32Schema).Field("value", connect.BytesSchema)
}

func vsdValue(s *connect.Schema, d connect.Decimal) *connect.Struct {
	st := connect.NewStructValue(s)
	st.PutFieldUnchecked(&s.Fields[0], d.Scale)
	st.PutFieldUnchecked(&s.Fields[1], connect.TwosComplement(d.Unscaled))
	return st
}

// numericMapping maps numeric(p,s) / numeric. In arrays (elem) pgjdbc
// cannot read NaN or infinities as BigDecimal and Debezium leaves the
// whole array null.
func numericMapping(mod int32, o *typeOpts, elem bool) *mapping {
	length, scale := numericMod(mod)
	spec := numericSpec{length: length, scale: scale}
	m := &mapping{toastErr: errToastType}
	special := func(sp string) (any, error) {
		if elem {
			return nil, convFailure("pgjdbc cannot read %s in a numeric array as a BigDecimal", sp)
		}
		switch o.decimal {
		case DecimalString:
			return specialName(sp), nil
		case DecimalDouble:
			return specialFloat(sp), nil
		}
		return nil, convFailure("Got a special value (NaN/Infinity) for Decimal type but current mode does not handle it. " +
			"If you need to support it then set decimal handling mode to 'string'.")
	}
	// convert is the value of a decimal (after parsing or for a default).
	var convert func(d connect.Decimal) (any, error)
	switch {
	case o.decimal == DecimalPrecise && spec.variable():
		var schema *connect.Schema
		m.schema = vsdSchema
		m.bind = func(s *connect.Schema) {
			schema = s
			m.fallback = vsdValue(s, connect.NewDecimal(0, 0))
		}
		convert = func(d connect.Decimal) (any, error) {
			d, err := spec.adjust(d)
			if err != nil {
				return nil, err
			}
			return vsdValue(schema, stripTrailingZeros(d)), nil
		}
	case o.decimal == DecimalPrecise:
		m.schema = func() *connect.SchemaBuilder {
			return connect.DecimalSchema(scale).Parameter(decimalPrecision, strconv.Itoa(int(length)))
		}
		m.fallback = connect.NewDecimal(0, scale)
		convert = func(d connect.Decimal) (any, error) { return spec.adjust(d) }
	case o.decimal == DecimalDouble:
		m.schema = plain(connect.Float64)
		m.fallback = float64(0)
		convert = func(d connect.Decimal) (any, error) {
			d, err := spec.adjust(d)
			if err != nil {
				return nil, err
			}
			return decimalFloat(d), nil
		}
	default:
		m.schema = plain(connect.String)
		m.toast, m.toastErr = o.placeholderStr, nil
		zero, _ := spec.adjust(connect.NewDecimal(0, 0))
		m.fallback = zero.String()
		convert = func(d connect.Decimal) (any, error) {
			d, err := spec.adjust(d)
			if err != nil {
				return nil, err
			}
			return d.String(), nil
		}
	}
	m.dec = func(b []byte, _ *arena) (any, error) {
		d, sp, err := parseNumericText(b)
		if err != nil {
			return nil, err
		}
		if sp != "" {
			return special(sp)
		}
		return convert(d)
	}
	if m.bind == nil {
		// A VariableScaleDecimal default would be a struct, which
		// Debezium drops (KAFKA-12694).
		m.defFromDecimal = convert
	}
	return m
}

// moneyMapping maps money as Debezium does: a Decimal of
// money.fraction.digits (rounded half up), a double, or the amount's
// plain string.
func moneyMapping(o *typeOpts) *mapping {
	scale := o.moneyScale
	m := &mapping{toastErr: errToastType}
	var convert func(d connect.Decimal) any
	switch o.decimal {
	case DecimalPrecise:
		m.schema = func() *connect.SchemaBuilder { return connect.DecimalSchema(scale) }
		m.fallback = connect.NewDecimal(0, scale)
		convert = func(d connect.Decimal) any {
			if d.Scale < scale {
				return rescale(d, scale)
			}
			r, _ := rescaleDown(d, scale, true)
			return r
		}
	case DecimalDouble:
		m.schema = plain(connect.Float64)
		m.fallback = float64(0)
		convert = func(d connect.Decimal) any { return decimalFloat(d) }
	default:
		m.schema = plain(connect.String)
		m.fallback = connect.NewDecimal(0, scale).String()
		convert = func(d connect.Decimal) any { return d.String() }
	}
	m.dec = func(b []byte, _ *arena) (any, error) {
		d, err := parseMoney(b)
		if err != nil {
			return nil, err
		}
		return convert(d), nil
	}
	return m
}

// parseMoney reads money output ("$1,234.50", "-$0.01", "($5.00)") as
// Debezium's PostgresMoney: parentheses and a leading '-' make it
// negative, a leading currency symbol and thousands separators go.
func parseMoney(b []byte) (connect.Decimal, error) {
	if len(b) == 0 {
		return connect.Decimal{}, errSyntax
	}
	neg := b[0] == '(' || b[0] == '-'
	s := b
	if s[0] == '-' {
		s = s[1:]
	}
	if len(s) >= 2 && s[0] == '(' && s[len(s)-1] == ')' {
		s = s[1 : len(s)-1]
	}
	if len(s) > 0 && !(s[0] >= '0' && s[0] <= '9') && s[0] != '.' {
		s = stripCurrency(s) // one character of currency symbol, as Debezium
	}
	clean := make([]byte, 0, len(s)+1)
	if neg {
		clean = append(clean, '-')
	}
	for _, c := range s {
		if c != ',' {
			clean = append(clean, c)
		}
	}
	d, sp, err := parseNumericText(clean)
	if err != nil || sp != "" {
		return connect.Decimal{}, fmt.Errorf("Failed to parse money value: %s", b)
	}
	return d, nil
}
