// The tagger's bounded-table and writer-identity metric families (proto/metrics.hpp
// tagger_bound_families): one sample per table and label, rendered as Prometheus text.
#include <doctest/doctest.h>

#include <string>

#include "proto/metrics.hpp"

using namespace kvfdp::proto;

TEST_CASE("metrics: the tagger's tables and identities render one sample per table and result")
{
	TaggerBounds b;
	b.tables.push_back({"file_table", 12, 65536, 3, 0});
	b.tables.push_back({"inode_policy", 65536, 65536, 70, 2});
	b.identities_resolved = 5;
	b.identities_by_pattern = 1;
	b.identities_unresolved = 4;
	b.identities_rewritten = 6;
	b.identities_provisional = 7;
	b.identities_provisional_right = 3;
	b.identities_provisional_wrong = 2;
	b.identity_early_bytes = 8192;
	b.renames_over = 9;
	b.requests = 320;
	b.missed_runs = 1;
	const std::string text = render_metrics(tagger_bound_families(b));
	for (const char *line :
	     {"kvfdp_tagger_table_entries{table=\"file_table\"} 12\n",
	      "kvfdp_tagger_table_limit{table=\"inode_policy\"} 65536\n",
	      "kvfdp_tagger_table_evictions_total{table=\"file_table\"} 3\n",
	      "kvfdp_tagger_table_evictions_total{table=\"inode_policy\"} 70\n",
	      "kvfdp_tagger_table_failed_inserts_total{table=\"inode_policy\"} 2\n",
	      "kvfdp_writer_identities_total{result=\"resolved\"} 5\n",
	      "kvfdp_writer_identities_total{result=\"by_pattern\"} 1\n",
	      "kvfdp_writer_identities_total{result=\"unresolved\"} 4\n",
	      "kvfdp_writer_identities_total{result=\"rewritten\"} 6\n",
	      "kvfdp_writer_identities_total{result=\"provisional\"} 7\n",
	      "kvfdp_writer_identities_total{result=\"provisional_right\"} 3\n",
	      "kvfdp_writer_identities_total{result=\"provisional_wrong\"} 2\n",
	      "kvfdp_writer_identity_early_bytes_total 8192\n",
	      "kvfdp_tagger_renames_over_total 9\n", "kvfdp_tagger_requests_total 320\n",
	      "kvfdp_tagger_missed_runs_total 1\n"})
		CHECK_MESSAGE(text.find(line) != std::string::npos, line);
	CHECK(has_family(text, "kvfdp_tagger_table_entries"));
	CHECK(text.find("# TYPE kvfdp_tagger_table_evictions_total counter") != std::string::npos);
	CHECK(text.find("# TYPE kvfdp_tagger_table_entries gauge") != std::string::npos);
	CHECK(text.find("# TYPE kvfdp_tagger_missed_runs_total counter") != std::string::npos);
}
