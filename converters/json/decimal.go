package json

import (
	"math/big"

	"github.com/fjordhq/fjord/connect"
)

// Decimals are the unscaled value's big-endian two's complement bytes
// (Java's BigInteger.toByteArray, minimal length). Most fit an int64:
// these helpers do those without math/big.

// appendUnscaled appends the minimal two's complement bytes of n.
func appendUnscaled(dst []byte, n *big.Int) []byte {
	if !n.IsInt64() {
		b, _ := connect.DecimalToBytes(&connect.Schema{Type: connect.Bytes, Parameters: map[string]string{connect.DecimalScaleParam: "0"}},
			connect.Decimal{Unscaled: n})
		return append(dst, b...)
	}
	v := n.Int64()
	var buf [8]byte
	for i := 7; i >= 0; i-- {
		buf[i] = byte(v)
		v >>= 8
	}
	// Drop leading bytes that only repeat the sign of the next one.
	i := 0
	for i < 7 && ((buf[i] == 0 && buf[i+1]&0x80 == 0) || (buf[i] == 0xff && buf[i+1]&0x80 != 0)) {
		i++
	}
	return append(dst, buf[i:]...)
}

// unscaledFromBytes reads two's complement bytes (non-empty).
func unscaledFromBytes(b []byte) *big.Int {
	if len(b) > 8 {
		n := new(big.Int).SetBytes(b)
		if b[0]&0x80 != 0 {
			n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(len(b)*8)))
		}
		return n
	}
	var v int64
	if b[0]&0x80 != 0 {
		v = -1
	}
	for _, c := range b {
		v = v<<8 | int64(c)
	}
	return big.NewInt(v)
}
