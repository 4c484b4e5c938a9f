#!/usr/bin/env python3
"""Names a built page defines besides its dt texts, each found first by a search for it:

- a class member printed bare inside its class's definition (Sphinx's API references anchor
  "queue.jobs.Worker.RetryLimitReached" but print "exception RetryLimitReached" or "max_tries = 3"
  inside the dt of "class queue.jobs.Worker"): it also defines "Worker.RetryLimitReached", which no
  page's text holds;
- a section heading that is code alone ("<h3><code>retry_backoff_ceiling</code></h3>", a setting's
  section; "<h2><code>Pool.resize(count[, timeout])</code></h2>", a signature, its name alone) defines
  its name, so the settings page comes before the release notes that mention the setting more
  often; a heading with words beside its code ("<code>WITH</code> Clause") does not,
  and neither does a code heading that three pages or more have (a release note's section of
  changes to one module, repeated in every release);
- of a page's sections, the one whose heading holds the word typed whole comes before one whose
  heading holds a longer word it begins ("Pool.resize" shows "Pool.resize(count[, timeout])"
  before "Pool.resizeto(count)", though the longer word is rarer), and a section whose heading is
  the word whole before those of longer names it begins ("qchan_send ()" before
  "qchan_send_range ()", which mentions it more);
- a Sphinx target, on an empty span or on the element after it, of a module ("module-queue.stores",
  not "module-overview", a heading's anchor) or of a project's object type
  ("std-setting-STORES-TTL") defines its name;
- the name a reference table's row begins with, when it is code of one word ("<td><code>anyqueue
  </code></td>", a signature's name), in a table of at most 100 rows;
- a word being typed that a page defines ("mod") finds that page before the pages of a longer,
  commoner word it begins ("Debug Mode");
- a program's source shown whole (Sphinx's viewcode page of a module, titled by its name; Doxygen's
  source page, a div.fragment of lines) comes after the page that declares its module or function;
- an option typed with its dashes ("--timeout", "-k" alone) finds the page that defines it before
  the pages that only say its word (in their titles, paths or section headings too); one being typed ("--pool") is completed to the options pages
  write ("--pool-size").

Usage: test_definitions.py INDEXER QUERY WORK_DIR
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sitelib import check, finish, index_site, query  # noqa: E402


def page(title, body):
    return (f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{title}</title></head>\n'
            f'<body><main><h1>{title}</h1>\n{body}\n</main></body></html>\n')


def release(version):
    # each release mentions the setting in its prose three times and has a section on the module
    return page(f'Release {version}', (
        f'<p>Release {version} of the job queue changes how workers retry.</p>'
        '<h2>Changes</h2><p>The <code>retry_backoff_ceiling</code> setting now caps the delay;'
        ' <code>retry_backoff_ceiling</code> defaults to ten minutes, and a worker reads'
        ' <code>retry_backoff_ceiling</code> once at start.</p>'
        '<h3><code>queue.scheduler</code></h3><p>The scheduler wakes idle workers sooner than before'
        f' in release {version}, and Pool.resize takes effect at once; the mod helper rounds.</p>'))


PAGES = {
    'index.html': page('The Job Queue', '<p>A small job queue: workers, settings and releases; Pool.resize'
                       ' sets how many workers run.</p>'),
    'api.html': page('Worker API', (
        '<p>The worker runs jobs and retries the ones that fail.</p>'
        '<dl class="py class"><dt class="sig sig-object py" id="queue.jobs.Worker">'
        '<em class="property">class </em><span class="sig-prename">queue.jobs.</span>'
        '<span class="sig-name">Worker</span>(<em>pool</em>)'
        '<a class="headerlink" href="#queue.jobs.Worker">¶</a></dt>'
        '<dd><p>Takes jobs from the pool and runs them one at a time.</p>'
        '<dl class="py exception"><dt class="sig sig-object py" id="queue.jobs.Worker.RetryLimitReached">'
        '<em class="property">exception </em><span class="sig-name">RetryLimitReached</span>'
        '<a class="headerlink" href="#queue.jobs.Worker.RetryLimitReached">¶</a></dt>'
        '<dd><p>Raised when a job has failed as many times as it may.</p></dd></dl>'
        '<dl class="py method"><dt class="sig sig-object py" id="queue.jobs.Worker.drain">'
        '<span class="sig-name">drain</span>(<em>timeout</em>)'
        '<a class="headerlink" href="#queue.jobs.Worker.drain">¶</a></dt>'
        '<dd><p>Finishes the running job and takes no other.</p></dd></dl>'
        '<dl class="py attribute"><dt class="sig sig-object py" id="queue.jobs.Worker.max_tries">'
        '<span class="sig-name">max_tries</span><em class="property"> = 3</em></dt>'
        '<dd><p>How many times a job is tried before it is given up.</p></dd></dl>'
        '</dd></dl>')),
    # a settings reference of many settings, each its section: its headings field is long
    'settings.html': page('Settings', (
        '<p>Every setting a worker reads at start.</p>' +
        ''.join(f'<h2><code>{area}_{what}_limit</code></h2><p>How many {what} the {area} allows.</p>'
                for area in ('pool', 'broker', 'result', 'beat', 'event', 'log', 'task', 'queue')
                for what in ('jobs', 'bytes', 'clients', 'files', 'hours')) +
        '<h2><code>retry_backoff_ceiling</code><a class="headerlink" href="#rbc">¶</a></h2>'
        '<p>The longest delay between two tries of a failed job.</p>'
        '<h2><code>WITH</code> Clause</h2><p>How a job names the pool it runs in.</p>')),
    'notes.html': page('Notes', '<p>The scheduler and the worker pool share one clock.</p>'
                       '<h2><code>Pool.resize(count[, timeout])</code></h2><p>Grows or shrinks the pool.</p>'
                       '<h2><code>Pool.resizeto(count)</code></h2><p>As Pool.resize does, but waits: Pool.resize'
                       ' returns at once, and Pool.resize is what most callers want.</p>'),
    # a command's options, each a definition among many; another page is all about timeouts
    'cli.html': page('Command Line Interface', (
        '<p>The worker command and its options.</p><dl class="std option">' +
        ''.join(f'<dt class="sig sig-object std" id="cmdoption-worker-{o}">'
                f'<span class="sig-name descname"><span class="pre">--{o}</span></span>'
                f'<span class="sig-prename descclassname"> <span class="pre">&lt;{o}&gt;</span></span></dt>'
                f'<dd><p>Sets the worker\'s {o.replace("-", " ")}.</p></dd>'
                for o in ('pool-size', 'log-level', 'log-file', 'pid-file', 'hostname', 'queues',
                          'prefetch', 'autoscale', 'max-memory', 'max-jobs', 'beat', 'events', 'timeout')) +
        '<dt class="sig sig-object std" id="cmdoption-worker-k"><span class="sig-name descname">'
        '<span class="pre">-k</span></span></dt><dd><p>Keeps the pool\'s jobs when the worker stops.</p></dd>'
        '</dl>')),
    'timeouts.html': page('Timeouts', (
        '<p>A job\'s timeout bounds how long it runs: past its timeout the worker stops it. The'
        ' timeout of a job is its own or the worker\'s; a k of jobs past their timeout is logged.</p>'
        '')),
    # an option only in a page's prose, and a page about its word with a section headed by it
    'serving.html': page('Serving', (
        '<p>The dashboard lists the queues, their workers and the jobs each runs, with the time each'
        ' job has taken; a job that failed shows its error, and a worker that stopped answering is'
        ' marked as lost until it reports again. The page refreshes every few seconds.</p>'
        '<p>Run it with <code>queue serve</code>; add <code>--reload</code> to restart it when a file'
        ' changes.</p>')),
    'reloading.html': page('Reloading Configuration', (
        '<p>Workers read their configuration at start, and on a reload.</p><h2>reload</h2><p>A reload'
        ' reads the files again: reload after an edit, and each reload is logged.</p>')),
    # Sphinx's targets: a module declared on a page whose title does not name it, a project's
    # own object type (a setting inside a setting's section); a section "Module overview" is none
    'stores.html': page('Result Stores', (
        '<section id="module-queue.stores"><span id="std-setting-STORES-TTL"></span>'
        '<p>Where a finished job\'s result is kept, and for how long: the stores of queue.stores'
        ' keep each result until its TTL runs out.</p>'
        '<h4><code>TTL</code></h4><p>Seconds a result is kept.</p></section>'
        '<section id="module-overview"><h2>Module overview</h2><p>One store per backend.</p></section>')),
    # a module's code as Sphinx's viewcode shows it: titled by the module's name, code whole
    '_modules/queue/stores/redis.html': page('queue.stores.redis', (
        '<p>Source code for queue.stores.redis</p><div class="highlight"><pre>' +
        ''.join(f'class Store{i}:\n    """A result store, kept {i} hours."""\n    ttl = {i * 3600}\n\n'
                for i in range(1, 12)) + '</pre></div>')),
    # a reference's table: the name each row begins with (a signature's name alone) is defined; a
    # row that begins with a statement is an example; a table of over 100 rows is a list of names
    'types.html': page('Job Types', (
        '<table><thead><tr><th>Name</th><th>Description</th></tr></thead><tbody>'
        '<tr><td><code>anyqueue</code></td><td>A job that any queue may run.</td></tr>'
        '<tr><td><a id="f1"></a><code>requeue_after</code> ( <code>seconds</code> )</td>'
        '<td>Puts the job back after a delay.</td></tr>'
        '<tr><td><code>SELECT * FROM jobs</code></td><td>Lists the jobs.</td></tr>'
        '</tbody></table>')),
    'queues.html': page('Queues', (
        '<p>A job marked anyqueue runs on the first free queue; anyqueue jobs are the default, and'
        ' anyqueue suits short jobs. A failed job may requeue_after a delay; requeue_after takes'
        ' seconds.</p>')),
    'words.html': page('Reserved Words', (
        '<table>' + ''.join(f'<tr><td><code>WORD{i}</code></td><td>reserved</td></tr>' for i in range(101)) +
        '</table>')),
    # a short name a page defines, and a longer, commoner word it begins in other pages' titles
    'arith.html': page('Arithmetic', (
        '<p>Whole-number helpers for job counts and sizes.</p>' +
        ''.join(f'<p>Helper {w} rounds a job count to the batch size the pool takes, and {w} keeps'
                f' sizes whole when the pool splits its jobs among the workers it runs.</p>'
                for w in ('floor', 'ceil', 'round', 'fix', 'gcd', 'lcm', 'rem', 'abs')) +
        '<dl class="function">'
        '<dt id="index-modulo"><code>r = mod (x, y)</code></dt><dd><p>The remainder of x divided by y,'
        ' with the sign of y.</p></dd></dl>')),
    'modes.html': page('Modes', '<p>A worker runs in a mode: the mode is set at start, and each mode logs'
                       ' differently.</p>'),
    'debug-mode.html': page('Debug Mode', '<p>In debug mode a worker logs each step; the mode is set at start.</p>'),
    'batch-mode.html': page('Batch Mode', '<p>In batch mode a worker takes jobs in groups.</p>'),
    'safe-mode.html': page('Safe Mode', '<p>In safe mode a worker runs no plugins.</p>'),
    'quiet-mode.html': page('Quiet Mode', '<p>In quiet mode a worker logs errors only; the mode suits batch runs.</p>'),
    # a definition list's terms without ids, as AsciiDoc writes a configuration's variables: a term
    # written as a code name defines it; a term of plain words, or of one plain word, does not
    'config.html': page('queue-config(1)', (
        '<p>The variables below configure queues; each applies to every queue unless a queue sets its own.</p>'
        '<dl><dt class="hdlist1">pool.maxIdle</dt><dd><p>Seconds a worker waits idle before it stops.</p></dd>'
        '<dt class="hdlist1">lease_window</dt><dd><p>Seconds a lease of a job lasts.</p></dd>'
        '<dt class="hdlist1">Working queue</dt><dd><p>The queue a worker takes jobs from.</p></dd>'
        '<dt class="hdlist1">Drainage</dt><dd><p>How a queue empties.</p></dd></dl>')),
    'tuning.html': page('Tuning the pool', (
        '<p>Set pool.maxIdle low for bursty loads: pool.maxIdle frees idle workers, and pool.maxIdle'
        ' of zero stops them at once. Raise lease_window when jobs run long; lease_window is in'
        ' seconds. Drainage and the working queue are tuned elsewhere.</p>')),
    # a C reference of one section per function, headed by its name (gtk-doc's): the function's
    # own section first, before those of longer names it begins that mention it more
    'channel.html': page('channel', (
        '<p>Functions of a job channel.</p>'
        '<h3 id="qchan-send-range">qchan_send_range ()</h3><pre>ssize_t qchan_send_range (qchan_t c, const void *data);'
        '</pre><p>Works like qchan_send() over a range; qchan_send rules apply, as qchan_send does for one.</p>'
        '<h3 id="qchan-send">qchan_send ()</h3><pre>ssize_t qchan_send (qchan_t c, const void *data);</pre>'
        '<p>Sends data on the channel.</p>'
        '<h3 id="qchan-send-file">qchan_send_file ()</h3><pre>ssize_t qchan_send_file (qchan_t c, int fd);</pre>'
        '<p>Like qchan_send, from a file; see qchan_send for the errors qchan_send gives.</p>')),
    # ... and its source file as Doxygen shows it (a div.fragment of div.line), named by it and
    # calling it on every line
    'qchan__send_8c_source.html': page('qchan_send.c', (
        '<div class="fragment">' + ''.join(
            f'<div class="line"><a name="l{i:05d}"></a><span class="lineno">{i:5d}</span>&#160;'
            f'ssize_t r{i} = qchan_send(c, buf{i}, len{i}); /* qchan_send call {i} */</div>' for i in range(1, 30)) +
        '</div>')),
    'stores-howto.html': page('Choosing a store', (
        '<p>The queue.stores package holds the stores. Import a store from queue.stores, or name'
        ' it in the settings: queue.stores reads the TTL of each store from them. A stores TTL'
        ' setting too short loses results.</p>')),
}
for v in ('1.0', '1.1', '1.2'):
    PAGES[f'release-{v}.html'] = release(v)


def main():
    indexer, query_bin, work = sys.argv[1:4]
    db = index_site(indexer, work, 'definitions', PAGES)

    def first(q):
        r = query(query_bin, db, '--', q)['results']
        return r[0]['path'] if r else None

    def defs_score(q, path):
        for h in query(query_bin, db, '--explain', q)['results']:
            if h['path'] == path:
                return float(h['explain'].split('defs ')[1].split()[0])
        return None

    for q in ('pool.maxIdle', 'lease_window'):
        got = first(q)
        check(got == '/config.html', f'"{q}": the page whose definition list names it first (got {got})')
    for q in ('drainage', 'working queue'):
        got = defs_score(q, '/config.html')
        check(got == 0.0, f'"{q}", a term of plain words, defines nothing (defs score {got})')
    r = query(query_bin, db, 'qchan_send')['results']
    got = [x['anchor'] for x in r[0].get('sections', [])] if r else None
    check(got and got[0] == 'qchan-send', f'"qchan_send": the section headed by it first (got {got})')
    got = first('qchan_send')
    check(got == '/channel.html', f'"qchan_send": the reference before the source that calls it most (got {got})')
    got = first('Worker.RetryLimitReached')
    check(got == '/api.html', f'"Worker.RetryLimitReached": the class\'s page first (got {got})')
    got = first('Worker.drain')
    check(got == '/api.html', f'"Worker.drain": the class\'s page first (got {got})')
    got = first('Worker.max_tries')
    check(got == '/api.html', f'"Worker.max_tries" (printed "max_tries = 3"): the class\'s page first (got {got})')
    got = first('retry_backoff_ceiling')
    check(got == '/settings.html', f'"retry_backoff_ceiling": the setting\'s section first, not a release (got {got})')
    got = defs_score('Pool.resize', '/notes.html')
    check(got is not None and got > 0, f'a signature in code defines its name (defs score {got})')
    got = defs_score('timeout', '/notes.html')
    check(got == 0.0, f'... and not its parameters (defs score {got})')
    # the word typed whole shows its own section first, not a completion's ("Pool.resizeto")
    hit = [h for h in query(query_bin, db, 'Pool.resize')['results'] if h['path'] == '/notes.html']
    got = hit[0]['sections'][0]['heading'] if hit and hit[0].get('sections') else None
    check(got and got.startswith('<mark>Pool.resize</mark>('), f'"Pool.resize": its own section first (got {got})')
    got = defs_score('clause', '/settings.html')
    check(got == 0.0, f'"<code>WITH</code> Clause" defines nothing (defs score {got})')
    got = defs_score('queue.scheduler', '/release-1.0.html')
    check(got == 0.0, f'a code heading on three pages defines nothing (defs score {got})')
    for q, want in (('queue.stores', '/stores.html'), ('STORES-TTL', '/stores.html')):
        got = first(q)
        check(got == want, f'"{q}": the page of its Sphinx target first (got {got})')
    got = first('queue.stores Store3')
    check(got == '/_modules/queue/stores/redis.html', f'"queue.stores Store3": the code, which alone holds Store3 (got {got})')
    got = defs_score('overview', '/stores.html')
    check(got == 0.0, f'the section "Module overview" (id module-overview) defines nothing (defs score {got})')
    for q in ('anyqueue', 'requeue_after'):
        got = first(q)
        check(got == '/types.html', f'"{q}": the table defining it first (got {got})')
    got = defs_score('seconds', '/types.html')
    check(got == 0.0, f'... its name alone, not its parameters (defs score {got})')
    got = defs_score('select', '/types.html')
    check(got == 0.0, f'a row that begins with a statement defines nothing (defs score {got})')
    got = defs_score('word7', '/words.html')
    check(got == 0.0, f'a table of 101 rows is a list of names, no definitions (defs score {got})')
    got = first('mod')
    check(got == '/arith.html', f'"mod", a name defined: its page before the titles its completion "mode" is in (got {got})')
    # an option typed with its dashes finds the page that defines it, not the pages of its word
    for q in ('--timeout', '-k', 'worker --timeout', '--log-level'):
        got = first(q)
        check(got == '/cli.html', f'"{q}": the page defining the option first (got {got})')
    # ... and one being typed is completed from the options the pages write
    got = [x['text'] for x in query(query_bin, db, '--suggest', '--pool')['suggestions'] if x['kind'] == 'query']
    check(got == ['--pool-size'], f'"--pool" typed: completed to the option, not the word (got {got})')
    got = first('--reload')
    check(got == '/serving.html', f'"--reload": the page with the option, not a section headed "reload" (got {got})')
    got = first('timeout')
    check(got == '/timeouts.html', f'"timeout", no dashes: the page about timeouts first (got {got})')
    return finish()


if __name__ == '__main__':
    sys.exit(main())
