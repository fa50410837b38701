package action

import "testing"

func TestSensitivePath(t *testing.T) {
	tests := []struct {
		path      string
		sensitive bool
	}{
		{"/home/u/proj/.env", true},
		{"/home/u/proj/.env.local", true},
		{"/home/u/proj/.env.production", true},
		{"/home/u/proj/prod.env", true},
		{"/home/u/proj/.env.example", false},
		{"/home/u/proj/.env.sample", false},
		{"/home/u/proj/.env.template", false},
		{"/srv/tls/server.pem", true},
		{"/srv/tls/server.key", true},
		{"/x/cert.p12", true},
		{"/x/store.pfx", true},
		{"/x/app.keystore", true},
		{"/home/u/.ssh/id_rsa", true},
		{"/home/u/keys/id_ed25519", true},
		{"/home/u/.ssh/id_rsa.pub", true}, // under .ssh: the whole directory counts
		{"/home/u/keys/id_rsa.pub", false},
		{"/home/u/proj/id_test.go", false},
		{"/home/u/.ssh", true},
		{"/home/u/.ssh/config", true},
		{"/home/u/.aws/credentials", true},
		{"/home/u/.aws/config", true},
		{"/home/u/.gnupg/pubring.kbx", true},
		{"/home/u/.kube/config", true},
		{"/home/u/.kube/cache/x", false},
		{"/home/u/.docker/config.json", true},
		{"/home/u/.netrc", true},
		{"/home/u/.npmrc", true},
		{"/home/u/.pypirc", true},
		{"/home/u/.git-credentials", true},
		{"/home/u/proj/credentials.json", true},
		// A file named for the credential a CLI keeps in it.
		{"/home/u/.config/deployr/token", true},
		{"/home/u/.fly/credentials", true},
		{"/home/u/.config/tool/api_key", true},
		{"/home/u/.local/share/app/session.token", true},
		{"/home/u/proj/src/token.go", false},
		{"/home/u/proj/src/tokenizer", false},
		{"/etc/shadow", true},
		{"/etc/sudoers", true},
		{"/etc/sudoers.d/90-cloud", true},
		{"/etc/passwd", false},
		{"/Users/u/Library/Keychains/login.keychain-db", true},
		{"/home/u/x.keychain", true},
		{"/home/u/.config/google-chrome/Default/Cookies", true},
		{"/home/u/.mozilla/firefox/abc.default/logins.json", true},
		{"/Users/u/Library/Application Support/Google/Chrome/Default/Login Data", true},
		{"/home/u/.password-store/email.gpg", true},
		{"/home/u/vault.kdbx", true},
		{"/srv/infra/terraform.tfstate", true},
		{"/srv/infra/prod.tfstate.backup", true},
		{"/home/u/.config/gcloud/application_default_credentials.json", true},
		{"/home/u/.azure/accessTokens.json", true},
		{".ssh/id_rsa", true},
		{"~/.aws/credentials", true},
		{"/home/u/proj/README.md", false},
		{"/home/u/proj/src/keys.go", false},
		{"/home/u/proj/environment.ts", false},
		// Where people keep passwords: documents and exports.
		{"/home/u/Dokumente/Steuer/elster-passwort.txt", true},
		{"/home/u/Documents/passwords.xlsx", true},
		{"/home/u/Documents/Passwords", true},
		{"/home/u/Documents/mots de passe.docx", true},
		{"/home/u/Documentos/contraseñas banco.txt", true},
		{"/home/u/Dokumente/Zugangsdaten Bank.pdf", true},
		{"/tmp/tax/bitwarden_export_2025-03-02.json", true},
		{"/home/u/Downloads/1PasswordExport-2025.1pux", true},
		{"/home/u/Downloads/lastpass_export.csv", true},
		{"/home/u/old.kdb", true},
		{"/home/u/Documenten/wachtwoorden.txt", true},
		{"/home/u/Dokumente/Kennwörter.txt", true},
		{"/home/u/Documents/senhas.txt", true},
		{"/home/u/Documents/identifiants.pdf", true},
		// Not password stores: code and documents about passwords.
		{"/home/u/proj/src/password_reset.go", false},
		{"/home/u/proj/src/PasswordField.tsx", false},
		{"/home/u/proj/docs/password-policy.md", false},
		{"/home/u/proj/fixtures/passwords_test.json", false},
		{"/home/u/Documents/password manager comparison.pdf", false},
		{"/home/u/proj/passport_scan.pdf", false},
	}
	paths := newTestClassifier(t).k.paths
	for _, tt := range tests {
		why, _ := paths.sensitive(tt.path)
		if (why != "") != tt.sensitive {
			t.Errorf("sensitive(%q) = %q, want sensitive=%v", tt.path, why, tt.sensitive)
		}
	}
}

func TestIBAN(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"DE89370400440532013000", []string{"DE89370400440532013000"}},
		{"pay to DE89 3704 0044 0532 0130 00 today", []string{"DE89370400440532013000"}},
		{"GB82 WEST 1234 5698 7654 32", []string{"GB82WEST12345698765432"}},
		{"FR1420041010050500013M02606", []string{"FR1420041010050500013M02606"}},
		{"NL91ABNA0417164300 and CH9300762011623852957", []string{"NL91ABNA0417164300", "CH9300762011623852957"}},
		{"DE89370400440532013001", nil}, // checksum fails
		{"DE00370400440532013000", nil},
		{"XX12", nil},
		{"order AB12 3456 7890 1234 5", nil},
		{"", nil},
	}
	for _, tt := range tests {
		got := findIBANs(tt.in)
		if len(got) != len(tt.want) {
			t.Errorf("findIBANs(%q) = %v, want %v", tt.in, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("findIBANs(%q) = %v, want %v", tt.in, got, tt.want)
			}
		}
	}
}

func TestParseAmount(t *testing.T) {
	tests := []struct {
		in   string
		want Amount
		ok   bool
	}{
		{"579 USD", Amount{579, "USD"}, true},
		{"USD 579", Amount{579, "USD"}, true},
		{"579usd", Amount{579, "USD"}, true},
		{"€12.50", Amount{12.5, "EUR"}, true},
		{"12,50 €", Amount{12.5, "EUR"}, true},
		{"$5", Amount{5, "USD"}, true},
		{"£1,234.56", Amount{1234.56, "GBP"}, true},
		{"1.234,56 EUR", Amount{1234.56, "EUR"}, true},
		{"1,234 EUR", Amount{1234, "EUR"}, true},
		{"1.234.567 CHF", Amount{1234567, "CHF"}, true},
		{"¥500", Amount{500, "JPY"}, true},
		{"CHF 12'500", Amount{12500, "CHF"}, true},
		{"42", Amount{42, ""}, true},
		{"-3.5 EUR", Amount{-3.5, "EUR"}, true},
		{"10 dollars", Amount{10, "USD"}, true},
		{"579 pcs", Amount{}, false},
		{"five euros", Amount{}, false},
		{"$5 and €6", Amount{}, false},
		{"", Amount{}, false},
	}
	for _, tt := range tests {
		got, ok := parseAmount(tt.in)
		if ok != tt.ok || ok && got != tt.want {
			t.Errorf("parseAmount(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	if v := minorToMajor(5000, "USD"); v != 50 {
		t.Errorf("minorToMajor(5000, USD) = %v", v)
	}
	if v := minorToMajor(500, "JPY"); v != 500 {
		t.Errorf("minorToMajor(500, JPY) = %v", v)
	}
	if v := minorToMajor(1500, "KWD"); v != 1.5 {
		t.Errorf("minorToMajor(1500, KWD) = %v", v)
	}
}
