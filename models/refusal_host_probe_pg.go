package models

import (
	"math"

	"gorm.io/gorm"
)

// A host substring that more than maxHostMatches refused hosts contain,
// on PostgreSQL. Matched against each row's host, it walked the primary
// key from the cursor through every row of other hosts: at ten million
// rows, "example.com" (every service host, under a flood's 2.6 million
// rows of others) took 2.5-3.1 s, and a substring of hosts refused only
// in the log's first weeks 3.5-6.4 s.
//
// Instead the page is found host by host, in two steps through the
// (host, id) index, each reading a few index entries per host:
//
//  1. Each host's newest row below the cursor (its oldest above it, for
//     a Newer page), and of those the page's worth, newest first.
//  2. When that fills a page, its last ID is an edge no row of the page
//     can lie beyond: those n rows already match, so any row past them
//     is not among the newest n. Nor can a row of another host be in
//     the page: that host's newest row is past the edge, and so are all
//     its others. So the page is the newest n rows of step 1's hosts on
//     the near side of the edge (perHostIDs), at most n hosts.
//
// Its cost is an index probe per host (about 16 µs each, measured: 80 ms
// for 5,000 hosts), whatever the log's size and wherever the rows are.
// Past hostDayMinHosts hosts the days' host counters usually name the
// few hosts of the page first (refusal_host_days_pg.go); where they
// cannot, the hosts are probed, and past maxHostProbes hosts the page
// reads the log as before (a substring that broad is usually dense among
// the newest rows, which the first window finds first: pageIDs).

// maxHostProbes bounds the hosts a page probes one by one.
const maxHostProbes = 5000

// manyHostIDs is the ID step of a page whose one filter is a host
// substring matching more than maxHostMatches hosts, on PostgreSQL: up to
// n IDs, probed host by host when at most hostDayMinHosts match; from the
// days' host counters (refusal_host_days_pg.go) when more do and they
// can tell; else probed when at most maxHostProbes hosts match; else
// read from the log.
func (q RefusalQuery) manyHostIDs(db *gorm.DB, n int) ([]int64, error) {
	hosts, probe, err := hostsMatchingUpTo(db, q.Host, maxHostProbes)
	if err != nil {
		return nil, err
	}
	return q.manyHostIDsOf(db, hosts, probe, n)
}

// manyHostIDsOf is manyHostIDs with the matching hosts listed (probe:
// at most maxHostProbes of them, all in hosts).
func (q RefusalQuery) manyHostIDsOf(db *gorm.DB, hosts []string, probe bool, n int) ([]int64, error) {
	if probe && len(hosts) == 0 {
		return nil, nil
	}
	// Past maxHostProbes hosts the other way is the log, row by row: the
	// counters' days are read however far the edge lies (a day's hosts
	// are a tenth of its rows or fewer).
	span := hostDaySpan
	if !probe {
		span = math.MaxInt
	}
	if !probe || len(hosts) > hostDayMinHosts {
		if ids, ok, err := q.hostDayIDs(db, n, span); err != nil || ok {
			return ids, err
		}
	}
	if !probe {
		return q.selectIDs(db, n, "")
	}
	return q.hostProbeIDs(db, hosts, n)
}

// hostDayMinHosts is how many matching hosts make the days' host
// counters worth reading: probing fewer, at about 17 µs a host, costs
// less than reading a few days' counters (20-30 ms at ten million rows),
// which a substring of hosts refused only long ago reads to no avail.
const hostDayMinHosts = 1000

// newerManyHostIDs is manyHostIDs for a Newer page (q.ascending, its
// cursor in q.idLow): as an Older page does (pageIDs), it reads the
// recentScan rows just above the cursor first, where a broad substring's
// rows usually are (5,000 hosts: 2-5 ms there, against 100 ms probing
// every host), and probes the hosts beyond them only when those rows do
// not fill the page.
func (q RefusalQuery) newerManyHostIDs(db *gorm.DB, n int) ([]int64, error) {
	near := q
	near.idHigh = q.idLow + recentScan - 1
	ids, err := near.selectIDs(db, n, "")
	if err != nil || len(ids) == n {
		return ids, err
	}
	// Nothing above the window (the log's newest rows): no host to probe.
	var top int64
	if err := db.Raw("SELECT COALESCE(MAX(id), 0) FROM refusals").Scan(&top).Error; err != nil || top <= near.idHigh {
		return ids, err
	}
	beyond := q
	beyond.idLow = near.idHigh + 1
	rest, err := beyond.manyHostIDs(db, n-len(ids))
	return append(ids, rest...), err
}

// hostProbeIDs finds up to n IDs of q among hosts in the two steps above.
func (q RefusalQuery) hostProbeIDs(db *gorm.DB, hosts []string, n int) ([]int64, error) {
	probe := q
	probe.hostIn, probe.Host, probe.HostExact = nil, "", false
	probe.drive = "host" // each host's rows, through (host, id)
	first, err := probe.idQuery(db.Where("host = h.host"), 1, "")
	if err != nil {
		return nil, err
	}
	var nearest []struct {
		Host string
		ID   int64
	}
	err = db.Session(&gorm.Session{NewDB: true}).
		Raw("SELECT h.host, x.id FROM unnest(?::text[]) AS h(host) CROSS JOIN LATERAL (?) AS x ORDER BY x.id "+q.direction()+" LIMIT ?", textArray(hosts), first.Select("id"), n).
		Scan(&nearest).Error
	if err != nil || len(nearest) == 0 {
		return nil, err
	}
	narrow := q
	narrow.Host, narrow.hostIn = "", make([]string, len(nearest))
	for i, r := range nearest {
		narrow.hostIn[i] = r.Host
	}
	if len(nearest) == n {
		edge := nearest[n-1].ID
		if q.ascending {
			if narrow.idHigh == 0 || narrow.idHigh > edge {
				narrow.idHigh = edge
			}
		} else {
			narrow.idLow = max(narrow.idLow, edge)
		}
	}
	return narrow.perHostIDs(db, n)
}
