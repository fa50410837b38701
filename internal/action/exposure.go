package action

import (
	"slices"
	"strings"
)

// Public exposure: calls that open something to anyone at all. A firewall
// rule or security group that admits 0.0.0.0/0, an object or bucket ACL of
// public-read, an IAM binding for allUsers: each turns a private resource
// into one the whole internet can reach, whatever else the call does.

// worldCIDRs are the address ranges that mean "every address".
var worldCIDRs = []string{"0.0.0.0/0", "::/0"}

// hasWorldCIDR reports whether s names the whole internet as an address
// range: "0.0.0.0/0" or "::/0" standing on their own, not as part of a
// longer address ("10.0.0.0/0" is not one, "CidrIp=0.0.0.0/0" is).
func hasWorldCIDR(s string) bool {
	for _, c := range worldCIDRs {
		for from := 0; ; {
			i := strings.Index(s[from:], c)
			if i < 0 {
				break
			}
			i += from
			end := i + len(c)
			if (i == 0 || !isAddrByte(s[i-1])) && (end == len(s) || !isAddrByte(s[end])) {
				return true
			}
			from = i + 1
		}
	}
	return false
}

// isAddrByte is a byte that can continue an IPv4 or IPv6 address or prefix.
func isAddrByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == '.' || c == ':' || c == '/'
}

// publicPrincipal reports whether s names everyone as a principal: Google
// Cloud's allUsers and allAuthenticatedUsers, S3's AllUsers group (as a
// grantee URI too), Azure's "*" is not matched here (too common a value).
func publicPrincipal(s string) bool {
	// Every principal has "ll" (allUsers, allAuthenticatedUsers) or
	// "/groups/global/" (S3's AllUsers URI): a byte scan rules most
	// values out before the case-folded search. allauthenticatedusers
	// contains no "allusers", so both are searched for.
	if len(s) < 8 || !strings.Contains(s, "ll") && !strings.Contains(s, "LL") && !strings.Contains(s, "/groups/") {
		return false
	}
	return hasStemFold(s, publicPrincipals)
}

// publicPrincipals name everyone (lower case, matched ignoring case).
var publicPrincipals = []string{"allusers", "allauthenticatedusers", "acs.amazonaws.com/groups/global/"}

// publicACL reports whether s is a canned ACL that lets anyone read or
// write (S3's public-read, public-read-write; GCS's publicRead).
func publicACL(s string) bool {
	s = strings.TrimSpace(s)
	for _, a := range publicACLs {
		if strings.EqualFold(s, a) {
			return true
		}
	}
	return false
}

// publicACLs are the canned ACLs that let anyone in.
var publicACLs = []string{"public-read", "public-read-write", "publicRead", "publicReadWrite", "public_read", "public_read_write"}

// closingVerbs are words in a command or tool name that take access away
// ("revoke-security-group-ingress", "firewall-rules delete"): a world range
// in them closes a hole rather than opening one.
var closingVerbs = []string{
	"revoke", "delete", "remove", "rm", "deny", "block", "disable", "deregister", "detach", "disassociate", "unset",
}

// closes reports whether any word of the argv (split on '-' and '_')
// takes access away.
func closes(words []string) bool {
	for _, w := range words {
		if strings.HasPrefix(w, "-") {
			continue
		}
		for w != "" {
			i := strings.IndexAny(w, "-_")
			part := w
			if i >= 0 {
				part, w = w[:i], w[i+1:]
			} else {
				w = ""
			}
			if closingVerb(part) {
				return true
			}
		}
	}
	return false
}

// closingVerb reports whether word is one of closingVerbs, ignoring case.
func closingVerb(word string) bool {
	if len(word) < 2 || len(word) > 12 {
		return false
	}
	for _, v := range closingVerbs {
		if strings.EqualFold(word, v) {
			return true
		}
	}
	return false
}

// publicCommand explains how a command line opens something to anyone, or
// returns "". It looks at world address ranges, public principals and
// canned ACLs in any argument, Azure's public blob access, repository
// visibility, and ufw rules without a source.
func publicCommand(name string, argv []string) string {
	if len(argv) < 2 || closes(argv[1:]) {
		return ""
	}
	for i, a := range argv[1:] {
		i++
		switch {
		case hasWorldCIDR(a):
			return "opens access to the whole internet (" + worldCIDRIn(a) + ")"
		case publicPrincipal(a):
			return "grants access to everyone (" + a + ")"
		}
		flag, val, hasVal := strings.Cut(a, "=")
		if !hasVal && i+1 < len(argv) {
			val = argv[i+1]
		}
		switch flag {
		case "--acl", "--canned-acl", "-a", "--predefined-acl":
			if publicACL(val) {
				return "sets the public ACL " + val + ": anyone can read it"
			}
		case "--public-access":
			if v := strings.ToLower(val); v == "blob" || v == "container" {
				return "makes the storage container readable by anyone"
			}
		case "--allow-blob-public-access":
			if strings.EqualFold(val, "true") {
				return "allows public access to the storage account's blobs"
			}
		case "--visibility":
			if strings.EqualFold(val, "public") {
				return "makes it public"
			}
		case "--public":
			if name == "gh" || name == "glab" {
				return "creates a public repository"
			}
		}
	}
	if name == "ufw" && (argv[1] == "allow" || argv[1] == "insert" && len(argv) > 3 && argv[3] == "allow") &&
		slices.Index(argv, "from") < 0 {
		return "ufw allow without a source admits the whole internet"
	}
	return ""
}

// adminRole reports whether s names an administrator-level role or policy:
// Kubernetes cluster-admin, AWS's AdministratorAccess and IAMFullAccess
// managed policies, Google Cloud's basic owner and editor roles, Azure's
// Owner and User Access Administrator.
func adminRole(s string) bool {
	// Every name below starts with c, r, a, O, U or R and is 5 to 60
	// bytes long: most argument values are ruled out by that alone.
	if len(s) < 5 || len(s) > 64 || !strings.ContainsRune("cCrRaAoOuU \t", rune(s[0])) {
		return false
	}
	s = strings.TrimSpace(s)
	for _, r := range adminRoles {
		if strings.EqualFold(s, r) {
			return true
		}
	}
	const awsPolicy = "arn:aws:iam::aws:policy/"
	if len(s) > len(awsPolicy) && strings.EqualFold(s[:len(awsPolicy)], awsPolicy) {
		p := s[len(awsPolicy):]
		return strings.EqualFold(p, "AdministratorAccess") || strings.EqualFold(p, "IAMFullAccess")
	}
	return azureRoleName(s)
}

// adminRoles are administrator roles by their exact names (any case).
var adminRoles = []string{"cluster-admin", "roles/owner", "roles/editor", "roles/resourcemanager.organizationAdmin", "roles/iam.securityAdmin"}

// azureRoleName reports whether s is one of Azure's administrator role
// names. They are ordinary words, so a tool argument counts only under a
// role key ("role", "roleDefinitionName"); "owner" in lower case is a
// Drive permission, judged elsewhere.
func azureRoleName(s string) bool {
	return s == "Owner" || s == "User Access Administrator" || s == "Role Based Access Control Administrator"
}

// adminCommand explains how a command line grants administrator-level
// access, or returns "": a role binding to cluster-admin, an attached
// AdministratorAccess policy, an IAM binding to roles/owner, an Azure role
// assignment of Owner.
func adminCommand(argv []string) string {
	if len(argv) < 2 || closes(argv[1:]) {
		return ""
	}
	for i, a := range argv[1:] {
		i++
		flag, val, hasVal := strings.Cut(a, "=")
		if !hasVal && i+1 < len(argv) {
			val = argv[i+1]
		}
		switch flag {
		case "--clusterrole", "--role", "--policy-arn", "--role-definition-name", "--assignee-role":
			if adminRole(val) {
				return "grants administrator access (" + val + ")"
			}
		}
	}
	return ""
}

// worldCIDRIn returns the world range s contains, for notes.
func worldCIDRIn(s string) string {
	for _, c := range worldCIDRs {
		if strings.Contains(s, c) {
			return c
		}
	}
	return s
}

// publicArg reports whether a tool argument's value opens something to
// anyone: a world address range, a public principal, or (under an ACL
// key) a public canned ACL.
func publicArg(key, s string) bool {
	if hasWorldCIDR(s) || publicPrincipal(s) {
		return true
	}
	switch key {
	case "acl", "canned_acl", "object_acl", "bucket_acl", "predefined_acl":
		return publicACL(s)
	}
	return false
}
