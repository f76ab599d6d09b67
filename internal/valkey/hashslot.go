package valkey

import "strings"

// HashSlots is the number of slots a Valkey cluster divides its keys into.
const HashSlots = 16384

// HashSlot is the cluster slot of key, as CLUSTER KEYSLOT answers it: CRC16/XMODEM of the
// key's hashtag modulo 16384. The hashtag is what lies between the first "{" and the first
// "}" after it, when that is not empty; otherwise the whole key is hashed.
func HashSlot(key string) int {
	return int(crc16(HashTag(key)) % HashSlots)
}

// HashTag is the part of key that HashSlot hashes: what lies between the first "{" and the
// first "}" after it when that is not empty, otherwise the whole key (only the first "{"
// counts: "a{}{b}" is hashed whole).
func HashTag(key string) string {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return key
	}
	end := strings.IndexByte(key[open+1:], '}')
	if end <= 0 {
		return key
	}
	return key[open+1 : open+1+end]
}

// crc16Table is CRC16/XMODEM (polynomial 0x1021, initial value 0, no reflection), the
// checksum the cluster specification names, one entry per leading byte.
var crc16Table = func() (table [256]uint16) {
	for b := range table {
		crc := uint16(b) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
		table[b] = crc
	}
	return table
}()

func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc = crc<<8 ^ crc16Table[byte(crc>>8)^s[i]]
	}
	return crc
}
