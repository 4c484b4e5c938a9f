#!/usr/bin/env python3
"""Character references in Markdown are decoded, numeric ones like named ones.

The mini corpus gets a section whose text holds decimal and hexadecimal references
(&#60;dispatch&#62;, &#x3C;&#X3E;, &#955;, &#x1F600;), named ones (&amp;, &lt;), invalid ones
(&#0;, &#xD800;, &#1114112;: U+FFFD, as CommonMark reads them), a control character (&#7;: a
space) and text that only looks like one (&#;, &#x;, &#12345678;: kept as typed). The search
snippet shows each decoded character HTML-escaped once (&lt;dispatch&gt;, never &amp;#60;).

usage: test_entities.py ATLAS_INDEX ATLAS_QUERY MINI_CORPUS
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

INDEXER, QUERY, MINI = sys.argv[1:4]
failures = 0


def check(name, cond, detail=''):
    global failures
    print(('ok    ' if cond else 'FAIL  ') + name + ('' if cond else '  (%s)' % detail))
    failures += not cond


def snippet(index, q):
    r = subprocess.run([QUERY, '--index', index, '--json', '--', q], capture_output=True,
                       text=True, check=True)
    d = json.loads(r.stdout)
    texts = []
    for h in d['results']:
        texts.append(h['snippet'])
        texts += [s['snippet'] for s in h['sections']]
    return ' '.join(texts)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        corpus, index = os.path.join(tmp, 'mini'), os.path.join(tmp, 'atlas.db')
        shutil.copytree(MINI, corpus)
        with open(os.path.join(corpus, 'explainers', 'lru-cache.md'), 'a', encoding='utf-8') as f:
            f.write('\n### References\n\nThe zorbulate call &#60;dispatch&#62; wraps &#x3C;hx&#X3E; '
                    'zorbulate &#955; and &#x1F600; zorbulate &amp; &lt; zorbulate bad &#0; '
                    '&#xD800; &#1114112; ctl a&#7;b zorbulate end.\n\nThe quixotry text &#; &#x; '
                    '&#12345678; stays.\n')
        subprocess.run([INDEXER, '--corpus', corpus, '--out', index, '--quiet'], check=True)
        s = snippet(index, 'zorbulate')
        check('decimal references decoded: &lt;dispatch&gt;', '&lt;dispatch&gt;' in s, s)
        check('hexadecimal references decoded: &lt;hx&gt;', '&lt;hx&gt;' in s, s)
        check('no reference left escaped twice', '&amp;#' not in s, s)
        check('non-ASCII code points: λ and 😀', 'λ' in s and '😀' in s, s)
        check('named references still decoded: &amp; &lt;', '&amp; &lt;' in s, s)
        check('NUL, a surrogate, past U+10FFFF: U+FFFD', s.count('\ufffd') >= 3, s)
        check('a control character is a space', 'a b' in s, s)
        s = snippet(index, 'quixotry')
        check('text that only looks like a reference is kept as typed',
              '&amp;#; &amp;#x; &amp;#12345678;' in s, s)
    print('%d failure(s)' % failures)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
