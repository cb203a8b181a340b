#!/bin/sh
# The portable core and the worker must not include httpd headers (the core is linked into
# the CLI, the worker and the tests; the worker runs outside httpd).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
bad=$(grep -lE '#[[:space:]]*include[[:space:]]*[<"](httpd|http_[a-z_]+|ap_[a-z_]+|util_[a-z_]+|mod_[a-z_]+|unixd|mpm_common)\.h' \
      "$top"/mod_journal/core/*.[ch] "$top"/mod_journal/core/ops/*.[ch] "$top"/workers/*.[ch] 2>/dev/null || true)
if [ -n "$bad" ]; then
    echo "layering: these core or worker files include httpd headers:" >&2
    echo "$bad" >&2
    exit 1
fi
echo "layering: core and worker are free of httpd headers"

# One output path: every answer body is written by the streaming writer (jr_jw.h) and handed
# over with jr_reply_jw, errors included (jr_fail renders through it). jansson stays for
# parsing and for values that exist as trees before any answer (jr_jw_json, in jr_json.c, is
# their one way in). The core, its operations and the httpd glue therefore never serialise
# with jansson themselves, never hand a jansson serialisation or a json_pack result to a reply
# or to the writer, and no reply takes a json_t; the glue, whose only JSON is answers, builds
# none with json_pack. (Audit field lists, event payloads and stored job parameters are not
# answers: they may still be built with jansson.)
out=$(perl -0777 -ne '
    my $f = $ARGV;
    s{/\*.*?\*/}{}gs;   # comments
    s{"(?:\\.|[^"\\])*"}{""}g;   # string literals
    my $n = 0;
    for my $st (split /[;{}]/) {
        my $why;
        if ($f !~ m{/jr_json\.c$} && $st =~ /\bjson_dump[a-z_]*\s*\(/) {
            $why = "serialises with jansson";
        } elsif ($f =~ m{/mod_journal/mj_[a-z_]+\.c$} && $st =~ /\bjson_pack\s*\(/) {
            $why = "builds JSON with json_pack in the glue (its only JSON is answers)";
        } elsif ($st =~ /\b(?:jr_reply\w*|jr_jw_\w+|jr_fail)\s*\(/ &&
                 $st =~ /\b(?:json_pack|jr_json_dump)\s*\(/ && $f !~ m{/jr_json\.c$}) {
            $why = "hands a jansson value to a reply or the writer";
        } elsif ($st =~ /\b\w*reply\w*\s*\([^()]*\bjson_t\b/) {
            $why = "declares a reply taking json_t";
        }
        if ($why) {
            (my $s = $st) =~ s/\s+/ /g;
            $s = substr($s, 0, 100);
            print "$f: $why: $s\n";
        }
    }
' "$top"/mod_journal/core/*.[ch] "$top"/mod_journal/core/ops/*.[ch] "$top"/mod_journal/*.[ch])
if [ -n "$out" ]; then
    echo "layering: answers must go through the streaming writer (docs/architecture.md):" >&2
    echo "$out" >&2
    exit 1
fi
echo "layering: every answer goes through the streaming writer"
