package action

import (
	"path"
	"strings"
)

// Sensitive paths: where secrets and credentials live. The rules apply
// wherever the path is, inside the project directory too: a project's .env
// holds the same kind of secrets as ~/.aws/credentials.

// sensitiveBase maps exact file names to why they are sensitive.
var sensitiveBase = map[string]string{
	".env":                 "environment file with secrets",
	".envrc":               "direnv file exporting secrets",
	".netrc":               "netrc with login passwords",
	"_netrc":               "netrc with login passwords",
	".npmrc":               "npm config with registry tokens",
	".pypirc":              "PyPI config with upload credentials",
	".git-credentials":     "git credential store",
	"credentials.json":     "credentials file",
	".pgpass":              "PostgreSQL password file",
	".my.cnf":              "MySQL client config with password",
	".boto":                "cloud storage credentials",
	".s3cfg":               "S3 credentials",
	".vault-token":         "Vault token",
	".htpasswd":            "password hashes",
	"terraform.tfstate":    "Terraform state with secrets",
	"Cookies":              "browser cookies",
	"Login Data":           "browser saved passwords",
	"Web Data":             "browser autofill data",
	"logins.json":          "browser saved passwords",
	"key4.db":              "browser key store",
	"key3.db":              "browser key store",
	"cookies.sqlite":       "browser cookies",
	"secrets.yml":          "application secrets",
	"secrets.yaml":         "application secrets",
	"credentials.yml.enc":  "encrypted application credentials",
	"service-account.json": "cloud service account key",
}

// sensitiveExt maps file extensions to why they are sensitive.
var sensitiveExt = map[string]string{
	".pem":         "PEM key or certificate",
	".key":         "private key",
	".p12":         "PKCS#12 key store",
	".pfx":         "PKCS#12 key store",
	".keystore":    "Java key store",
	".jks":         "Java key store",
	".kdbx":        "KeePass password database",
	".ppk":         "PuTTY private key",
	".tfstate":     "Terraform state with secrets",
	".keychain":    "macOS keychain",
	".keychain-db": "macOS keychain",
	".kdb":         "KeePass password database",
	".1pux":        "1Password export",
	".1pif":        "1Password export",
	".psafe3":      "Password Safe database",
	".opvault":     "1Password vault",
}

// sensitiveDirs are path fragments, each starting and ending with "/", that
// are matched against "/"+path+"/": everything under them (and the
// directory or file itself) is sensitive.
var sensitiveDirs = []struct{ frag, why string }{
	{"/.ssh/", "SSH keys and config"},
	{"/.aws/", "AWS credentials"},
	{"/.gnupg/", "GnuPG keys"},
	{"/.password-store/", "pass password store"},
	{"/.azure/", "Azure CLI credentials"},
	{"/.config/gcloud/", "Google Cloud credentials"},
	{"/.config/gh/", "GitHub CLI token"},
	{"/.kube/config/", "Kubernetes credentials"},
	{"/.docker/config.json/", "Docker registry credentials"},
	{"/Library/Keychains/", "macOS keychain"},
	{"/.mozilla/firefox/", "Firefox profile"},
	{"/Library/Application Support/Firefox/Profiles/", "Firefox profile"},
	{"/.config/google-chrome/", "Chrome profile"},
	{"/.config/chromium/", "Chromium profile"},
	{"/.config/BraveSoftware/", "Brave profile"},
	{"/Library/Application Support/Google/Chrome/", "Chrome profile"},
	{"/AppData/Local/Google/Chrome/User Data/", "Chrome profile"},
	{"/.local/share/keyrings/", "GNOME keyring"},
	{"/etc/sudoers.d/", "sudo rules"},
	{"/etc/ssl/private/", "TLS private keys"},
}

// sensitiveAbs are absolute paths that are sensitive.
var sensitiveAbs = map[string]string{
	"/etc/shadow":        "system password hashes",
	"/etc/gshadow":       "system group password hashes",
	"/etc/sudoers":       "sudo rules",
	"/etc/master.passwd": "system password hashes",
}

// envNotSecret are .env variants that by convention hold no real secrets.
var envNotSecret = map[string]bool{
	".env.example": true, ".env.sample": true, ".env.template": true, ".env.dist": true, ".env.defaults": true,
}

// sensitivePath reports whether p (already normalised) is a place secrets
// live, and why. A second result, harmlessEnv, reports an example env file
// (".env.example"), which is recognised but not secret.
func sensitivePath(p string) (why string, harmlessEnv bool) {
	if p == "" {
		return "", false
	}
	if w, ok := sensitiveAbs[p]; ok {
		return w, false
	}
	// Match directory fragments against "/"+p+"/" so that relative paths
	// (".ssh/id_rsa") and the directory itself ("~/.ssh") count.
	probe := p
	if !strings.HasPrefix(probe, "/") {
		probe = "/" + probe
	}
	probe += "/"
	for _, d := range sensitiveDirs {
		if strings.Contains(probe, d.frag) {
			return d.why, false
		}
	}
	base := path.Base(p)
	if envNotSecret[base] {
		return "", true
	}
	if w := sensitiveBase[base]; w != "" {
		return w, false
	}
	if strings.HasPrefix(base, ".env.") || strings.HasSuffix(base, ".env") && base != ".env" && !strings.Contains(base, "example") {
		return "environment file with secrets", false
	}
	// id_rsa, id_ed25519, id_ecdsa_sk, id_work … but not id_rsa.pub and
	// not source files such as id_test.go.
	if strings.HasPrefix(base, "id_") && !strings.Contains(base, ".") {
		return "SSH private key", false
	}
	if strings.HasPrefix(p, "/etc/ssh/ssh_host_") && strings.HasSuffix(base, "_key") {
		return "SSH host private key", false
	}
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		ext := base[i:]
		if w, ok := sensitiveExt[ext]; ok {
			return w, false
		}
		if ext == ".backup" && strings.HasSuffix(base, ".tfstate.backup") {
			return "Terraform state with secrets", false
		}
		if ext == ".json" && strings.HasPrefix(base, "credentials") {
			return "credentials file", false
		}
	}
	if strings.Contains(base, ".keychain") {
		return "macOS keychain", false
	}
	if w := passwordDocument(base); w != "" {
		return w, false
	}
	return "", false
}

// Password documents: the text files, spreadsheets and exports people keep
// passwords in ("passwords.xlsx", "elster-passwort.txt",
// "bitwarden_export_2025.json"). Only document and data formats count, so
// source files about passwords (password_reset.go, PasswordField.tsx) do not.
var (
	passwordDocExts = map[string]bool{
		"": true, ".txt": true, ".text": true, ".csv": true, ".tsv": true, ".json": true, ".xml": true,
		".md": true, ".rtf": true, ".doc": true, ".docx": true, ".odt": true, ".pdf": true, ".xls": true,
		".xlsx": true, ".ods": true, ".numbers": true, ".pages": true, ".enex": true, ".yaml": true, ".yml": true,
		".gpg": true, ".asc": true, ".zip": true, ".7z": true, ".bak": true,
	}
	// passwordWords name passwords and login data, in the languages
	// Mandate compiles, and a few more; compared against the lower-case
	// words of the file name. Not "passwd": /etc/passwd holds no
	// passwords.
	passwordWords = map[string]bool{
		"password": true, "passwords": true, "passwort": true, "passwoerter": true, "passwörter": true,
		"kennwort": true, "kennwörter": true, "kennwoerter": true, "zugangsdaten": true,
		"logindaten": true, "contraseña": true, "contraseñas": true, "contrasena": true, "contrasenas": true,
		"credenciales": true, "motdepasse": true, "motsdepasse": true, "identifiants": true, "senha": true,
		"senhas": true, "wachtwoord": true, "wachtwoorden": true, "lösenord": true, "passord": true,
		"credentials": true, "logins": true,
	}
	// passwordManagers are the products whose exports hold every password
	// a person has.
	passwordManagers = []string{"bitwarden", "1password", "lastpass", "keepass", "dashlane", "nordpass", "enpass", "roboform", "protonpass"}
	// passwordDocBenign are words that make a file name about passwords
	// rather than a store of them.
	passwordDocBenign = map[string]bool{
		"policy": true, "policies": true, "reset": true, "strength": true, "validator": true, "validation": true,
		"generator": true, "hash": true, "hasher": true, "hashing": true, "forgot": true, "forgotten": true,
		"change": true, "rules": true, "requirements": true, "guide": true, "howto": true, "tutorial": true,
		"comparison": true, "review": true, "test": true, "tests": true, "spec": true, "mock": true,
		"example": true, "sample": true, "template": true, "schema": true,
	}
)

// passwordStems is a cheap first test: every password word and manager
// name contains one of these (compared ignoring ASCII case), so most file
// names are rejected without being split into words.
var passwordStems = []string{"pass", "wort", "word", "contras", "credenc", "credential", "zugang", "login",
	"identifiant", "senha", "lösenord", "kennw", "wacht", "bitwarden", "keepass", "dashlane", "enpass", "roboform", "mot"}

// hasStemFold reports whether s contains one of the lower-case stems,
// ignoring ASCII case, without allocating.
func hasStemFold(s string, stems []string) bool {
	for _, st := range stems {
		for i := 0; i+len(st) <= len(s); i++ {
			j := 0
			for ; j < len(st); j++ {
				c := s[i+j]
				if c >= 'A' && c <= 'Z' {
					c += 'a' - 'A'
				}
				if c != st[j] {
					break
				}
			}
			if j == len(st) {
				return true
			}
		}
	}
	return false
}

// passwordDocument reports why a file named base holds passwords, or "".
func passwordDocument(base string) string {
	stem, ext := base, ""
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		stem, ext = base[:i], base[i:]
	}
	if !passwordDocExts[ext] && !passwordDocExts[strings.ToLower(ext)] || !hasStemFold(stem, passwordStems) {
		return ""
	}
	lower := strings.ToLower(stem)
	words := strings.FieldsFunc(lower, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 0x7f)
	})
	found := ""
	for i, w := range words {
		if passwordDocBenign[w] {
			return ""
		}
		switch {
		case passwordWords[w]:
			found = "file of passwords or login data"
		case w == "mot" && i+2 < len(words) && words[i+1] == "de" && (words[i+2] == "passe" || words[i+2] == "passes"),
			w == "mots" && i+2 < len(words) && words[i+1] == "de" && words[i+2] == "passe":
			found = "file of passwords or login data"
		}
	}
	if found != "" {
		return found
	}
	compact := strings.Join(words, "")
	for _, m := range passwordManagers {
		if strings.Contains(compact, m) || m == "protonpass" && strings.Contains(lower, "proton pass") {
			return "password manager export"
		}
	}
	return ""
}

// pathRef builds a PathRef for a raw path string: normalised and checked for
// sensitivity. It returns notes for a relative path left unresolved and for
// example env files.
func pathRef(raw string, access Kind, dir, home string) (PathRef, []string) {
	p, rel := normPath(raw, dir, home)
	ref := PathRef{Path: p, Access: access}
	var notes []string
	if rel {
		notes = append(notes, "relative path "+p+" kept as is: working directory unknown")
	}
	why, harmless := sensitivePath(p)
	if why == "" && p != raw {
		// The raw form may carry what normalisation dropped ("~user").
		why, _ = sensitivePath(raw)
	}
	if why != "" {
		ref.Sensitive, ref.Why = true, why
	}
	if harmless {
		notes = append(notes, p+" is an example env file, not treated as secret")
	}
	return ref, notes
}
