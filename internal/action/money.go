package action

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

var currencyCodeRE = regexp.MustCompile(`^[A-Z]{3}$`)

// currencySymbols maps symbols and common words to ISO 4217 codes. "$" is
// taken as USD; callers that know better say so with a currency argument.
var currencySymbols = map[string]string{
	"$": "USD", "US$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY", "₹": "INR", "₩": "KRW",
	"₽": "RUB", "₺": "TRY", "₪": "ILS", "₫": "VND", "₴": "UAH", "₱": "PHP", "฿": "THB",
	"C$": "CAD", "CA$": "CAD", "A$": "AUD", "AU$": "AUD", "NZ$": "NZD", "HK$": "HKD", "S$": "SGD",
	"R$": "BRL", "Fr.": "CHF", "kr": "SEK", "zł": "PLN", "Kč": "CZK",
	"dollar": "USD", "dollars": "USD", "euro": "EUR", "euros": "EUR", "pound": "GBP", "pounds": "GBP",
	"yen": "JPY", "franc": "CHF", "francs": "CHF",
}

// currencyDigits is the number of minor-unit digits of currencies that do not
// use two (ISO 4217); amounts in minor units (Stripe's cents) are divided by
// 10^digits.
var currencyDigits = map[string]int{
	"BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0, "PYG": 0,
	"RWF": 0, "UGX": 0, "UYI": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
	"BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
}

// knownCurrencies are the codes recognised after a number ("579 USD"); a
// three-letter word that is not a currency ("579 pcs") is no amount.
var knownCurrencies = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range strings.Fields(`USD EUR GBP JPY CHF CAD AUD NZD CNY HKD SGD SEK NOK DKK PLN CZK HUF
		RON BGN TRY RUB UAH INR KRW BRL MXN ARS CLP COP PEN ZAR NGN KES EGP MAD AED SAR QAR KWD
		BHD OMR JOD ILS THB VND IDR MYR PHP TWD PKR BDT LKR ISK IQD TND LYD XAF XOF XPF BIF DJF
		GNF KMF PYG RWF UGX VUV UYI BTC ETH USDC USDT`) {
		m[c] = true
	}
	return m
}()

// minorToMajor converts an amount in minor units (cents) to major units.
func minorToMajor(v float64, currency string) float64 {
	d, ok := currencyDigits[currency]
	if !ok {
		d = 2
	}
	return v / math.Pow10(d)
}

// numberRE matches a number with optional thousands separators and decimal
// part, in either the 1,234.56 or the 1.234,56 convention.
var amountRE = regexp.MustCompile(`^\s*([A-Za-z]{3}|[^\d\s.,+-]{1,3}\.?)?\s*([+-]?\d{1,3}(?:[ ,.']\d{3})*(?:[.,]\d+)?|[+-]?\d+(?:[.,]\d+)?)\s*([A-Za-z]{3,7}|[^\d\s.,]{1,3})?\s*$`)

// parseAmount reads "579 USD", "USD 579", "€12.50", "12,50 €", "$5",
// "1,234.56", "1.234,56 EUR". A bare number has currency "". ok is false for
// anything else.
func parseAmount(s string) (Amount, bool) {
	if len(s) > 64 {
		return Amount{}, false
	}
	m := amountRE.FindStringSubmatch(s)
	if m == nil {
		return Amount{}, false
	}
	pre, num, post := strings.TrimSpace(m[1]), m[2], strings.TrimSpace(m[3])
	if pre != "" && post != "" {
		return Amount{}, false
	}
	cur := ""
	for _, sym := range []string{pre, post} {
		if sym == "" {
			continue
		}
		if c, ok := currencySymbols[sym]; ok {
			cur = c
		} else if c, ok := currencySymbols[strings.ToLower(sym)]; ok {
			cur = c
		} else if up := strings.ToUpper(sym); knownCurrencies[up] {
			cur = up
		} else {
			return Amount{}, false
		}
	}
	v, ok := ParseNumber(num)
	if !ok {
		return Amount{}, false
	}
	return Amount{Value: v, Currency: cur}, true
}

// ParseNumber parses a decimal with either separator convention: the last
// separator followed by exactly 3 digits is a thousands separator unless
// it is the only separator and a "." (1.500 reads as 1.5 only in the US
// convention, and prices with three decimals are rare, so it stays 1500
// for "," and 1.5 for ".").
func ParseNumber(s string) (float64, bool) {
	s = strings.ReplaceAll(strings.ReplaceAll(s, " ", ""), "'", "")
	lastDot, lastComma := strings.LastIndexByte(s, '.'), strings.LastIndexByte(s, ',')
	switch {
	case lastDot >= 0 && lastComma >= 0:
		if lastComma > lastDot { // 1.234,56
			s = strings.ReplaceAll(s, ".", "")
			s = strings.Replace(s, ",", ".", 1)
		} else { // 1,234.56
			s = strings.ReplaceAll(s, ",", "")
		}
	case lastComma >= 0:
		if strings.Count(s, ",") == 1 && len(s)-lastComma-1 != 3 { // 12,50
			s = strings.Replace(s, ",", ".", 1)
		} else { // 1,234 or 1,234,567
			s = strings.ReplaceAll(s, ",", "")
		}
	case strings.Count(s, ".") > 1: // 1.234.567
		s = strings.ReplaceAll(s, ".", "")
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}

// numberValue converts a JSON number in any of the forms decoders produce.
func numberValue(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, !math.IsNaN(n) && !math.IsInf(n, 0)
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case uint64:
		return float64(n), true
	case interface{ Float64() (float64, error) }: // json.Number
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// ibanRE finds IBAN candidates: country, check digits and 11–30
// alphanumerics, optionally grouped by spaces.
var ibanRE = regexp.MustCompile(`\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b`)

// ibanLengths are the IBAN lengths of the common countries; others are
// accepted at any valid length.
var ibanLengths = map[string]int{
	"AD": 24, "AT": 20, "BE": 16, "BG": 22, "CH": 21, "CY": 28, "CZ": 24, "DE": 22, "DK": 18,
	"EE": 20, "ES": 24, "FI": 18, "FR": 27, "GB": 22, "GR": 27, "HR": 21, "HU": 28, "IE": 22,
	"IS": 26, "IT": 27, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "MC": 27, "MT": 31, "NL": 18,
	"NO": 15, "PL": 28, "PT": 25, "RO": 24, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "TR": 26,
	"AE": 23, "SA": 24, "IL": 23, "BR": 29, "UA": 29,
}

// IBANLength is the length of an IBAN of the country, where it is one of
// the common countries.
func IBANLength(country string) (int, bool) {
	n, ok := ibanLengths[country]
	return n, ok
}

// findIBANs returns the valid IBANs in s, normalised without spaces.
func findIBANs(s string) []string {
	if len(s) < 15 || !hasIBANShape(s) {
		return nil
	}
	var out []string
	for _, m := range ibanRE.FindAllString(s, 8) {
		iban := strings.ReplaceAll(m, " ", "")
		// The regexp may swallow a following word; trim to the
		// country's length when known.
		if n, ok := ibanLengths[iban[:2]]; ok {
			if len(iban) < n {
				continue
			}
			iban = iban[:n]
		}
		if ValidIBAN(iban) {
			out = append(out, iban)
		}
	}
	return out
}

// hasIBANShape is a cheap pre-check: two upper-case letters followed by two
// digits somewhere in s.
func hasIBANShape(s string) bool {
	for i := 0; i+3 < len(s); i++ {
		if isUpper(s[i]) && isUpper(s[i+1]) && isDigit(s[i+2]) && isDigit(s[i+3]) {
			return true
		}
	}
	return false
}

// ValidIBAN checks the ISO 13616 mod-97 checksum.
func ValidIBAN(iban string) bool {
	if len(iban) < 15 || len(iban) > 34 {
		return false
	}
	rearranged := iban[4:] + iban[:4]
	r := 0
	for i := 0; i < len(rearranged); i++ {
		c := rearranged[i]
		switch {
		case isDigit(c):
			r = (r*10 + int(c-'0')) % 97
		case isUpper(c):
			r = (r*100 + int(c-'A') + 10) % 97
		default:
			return false
		}
	}
	return r == 1
}

func isUpper(c byte) bool { return c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool { return c >= '0' && c <= '9' }
