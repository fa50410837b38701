package mandate

import (
	"fmt"
	"testing"
)

// TestWordCounts: the counts the user's words state, in five languages,
// and the numbers that name something rather than count it.
func TestWordCounts(t *testing.T) {
	for _, c := range []struct {
		text string
		want string // "n:first word" of each count, in order
	}{
		// counts, digits and number words
		{"buy 2 packs of the Ariel all-in-one pods", "[2:packs]"},
		{"Order two replacement filters for the Brita jug please", "[2:replacement]"},
		{"book one room at the Hotel Adlon", "[1:room]"},
		{"send the review notes to 3 people on the design team", "[3:people]"},
		{"delete the two drafts about the offsite", "[2:drafts]"},
		{"Kauf zwei Packungen Lavazza Kaffeebohnen", "[2:packungen]"},
		{"Lösch die zwei Entwürfe zum Sommerfest", "[2:entwurfe]"},
		{"Réserve une chambre à l'Hôtel du Louvre", "[1:chambre]"},
		{"Envoie le compte rendu à deux personnes de l'équipe", "[2:personnes]"},
		{"Compra dos entradas para el concierto", "[2:entradas]"},
		{"borra los dos borradores del viaje", "[2:borradores]"},
		{"compra due confezioni di capsule Nespresso", "[2:confezioni]"},
		{"prenota due camere all'Hotel Danieli", "[2:camere]"},
		// model, version, room and order numbers are not counts
		{"buy spare tips for my Apple Pencil 2", "[]"},
		{"get ink for the HP DeskJet 2720, black and colour", "[]"},
		{"buy 1 iPhone 15 silicone case", "[1:iphone]"},
		{"order 3 HP 305 black ink cartridges", "[3:hp]"},
		{"buy Windows 11 Pro licences", "[]"},
		{"book room 204 at the Seehof again", "[]"},
		{"put 2 packs of the Pampers Baby-Dry size 5 in my cart", "[2:packs]"},
		{"delete the drafts about order #4411", "[]"},
		{"Bestell zwei Toner für den HP LaserJet 1020", "[2:toner]"},
		{"Kauf Ersatzbürsten für die Oral-B Pro 3", "[]"},
		{"Buch Zimmer 12 im Hotel Post wieder", "[]"},
		{"Achète des stylets pour les Surface Pro 7 du bureau", "[]"},
		{"Réserve la chambre 12 comme l'an dernier", "[]"},
		{"compra licencias de Windows 11 para la oficina", "[]"},
		{"cancela el pedido 88 de ayer", "[]"},
		{"compra custodie per iPhone 6 per il negozio", "[]"},
		{"prenota la camera 204 all'Hotel Roma", "[]"},
		// measures, dates, times and numbers with nothing after them
		{"book one room for 3 nights, 12 to 14 December", "[1:room]"},
		{"dal 10 al 12 aprile, due camere", "[2:camere]"},
		{"un stylet par personne, on est huit", "[]"},
		{"tickets for the 19:30 showing", "[]"},
		{"somos 25", "[]"},
		{"", "[]"},
	} {
		got, err := WordCounts(c.text)
		if err != nil {
			t.Fatal(err)
		}
		var short []string
		for _, wc := range got {
			first := ""
			if len(wc.Words) > 0 {
				first = wc.Words[0]
			}
			short = append(short, fmt.Sprintf("%d:%s", wc.N, first))
		}
		if s := fmt.Sprint(short); s != c.want {
			t.Errorf("WordCounts(%q) = %s, want %s (%+v)", c.text, s, c.want, got)
		}
	}
}
