/* site_config.c - a built site's configuration (atlas.json): its globs, the pages to leave out,
 * page types, the topic root, the content and chrome selectors. */
#include "site_internal.h"
#include "error.h"
#include "anchor.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Chrome most generators put inside the element that holds the page's text: DocBook's navigation
 * header and footer, permalink marks, navigation roles, breadcrumbs, Sphinx's sidebars. */
static const char default_ignore[] =
	".navheader, .navfooter, .headerlink, [role=navigation], [role=search], [role=banner],"
	" [role=contentinfo], .breadcrumb, .breadcrumbs, .related, .sphinxsidebar, [aria-hidden=true]";

/**************************************************************************************************
** Globs.
*/

static bool glob_at(const char *p, const char *s)
{
	for (;;) {
		if (!*p)
			return !*s;
		if (p[0] == '*' && p[1] == '*') {
			p += 2;
			if (*p == '/') {
				p++;
				for (const char *q = s;;) {
					if (glob_at(p, q))
						return true;
					const char *sl = strchr(q, '/');
					if (!sl)
						return false;
					q = sl + 1;
				}
			}
			for (const char *q = s;; q++) {
				if (glob_at(p, q))
					return true;
				if (!*q)
					return false;
			}
		}
		if (*p == '*') {
			p++;
			for (const char *q = s;; q++) {
				if (glob_at(p, q))
					return true;
				if (!*q || *q == '/')
					return false;
			}
		}
		if (!*s || *s == '/') {
			if (*p != *s)
				return false;
			if (!*s)
				return false;
			p++;
			s++;
			continue;
		}
		if (*p == '?') {
			p++;
			s++;
			continue;
		}
		if (*p == '[') {
			const char *e = strchr(p + 1 + (p[1] == ']' || p[1] == '!'), ']');
			if (e) {
				char cls[128], one[2] = { *s, 0 };
				size_t n = (size_t)(e - p + 1);
				if (n < sizeof(cls)) {
					memcpy(cls, p, n);
					cls[n] = '\0';
					if (fnmatch(cls, one, 0) != 0)
						return false;
					p = e + 1;
					s++;
					continue;
				}
			}
		}
		if (*p == '\\' && p[1])
			p++;
		if (*p != *s)
			return false;
		p++;
		s++;
	}
}

bool site_glob_match(const char *glob, const char *path)
{
	if (glob_at(glob, path))
		return true;
	if (!strchr(glob, '/')) {
		const char *last = strrchr(path, '/');
		return last && glob_at(glob, last + 1);
	}
	return false;
}

/**************************************************************************************************
** Configuration.
*/

/* The page type named n (an enum atlas_page_type), or -1 when n names none: a lookup, not an
 * error code. */
static int type_of_name(const char *n)
{
	for (int t = 0; t < 4; t++)
		if (strcmp(n, atlas_page_type_names[t]) == 0)
			return t;
	return -1;
}

void config_free(site_config *cfg)
{
	free(cfg->file);
	free(cfg->site_url);
	for (int i = 0; i < cfg->nexclude; i++)
		free(cfg->exclude[i]);
	free(cfg->exclude);
	for (int i = 0; i < cfg->ntypes; i++)
		free(cfg->types[i].glob);
	free(cfg->types);
	free(cfg->topic_root);
	html_sel_free(cfg->content);
	html_sel_free(cfg->ignore);
	memset(cfg, 0, sizeof(*cfg));
}

/* Line of the first occurrence of "key" in the file's text, or 1. */
static int key_line(const char *text, const char *key)
{
	char pat[128];
	snprintf(pat, sizeof(pat), "\"%s\"", key);
	const char *p = strstr(text, pat);
	int line = 1;
	for (const char *q = text; p && q < p; q++)
		line += *q == '\n';
	return line;
}

/* A selector list given as one string or an array of strings, joined with commas into sb. */
static bool selector_text(cJSON *v, strbuf *sb)
{
	if (cJSON_IsString(v)) {
		strbuf_puts(sb, v->valuestring);
		return true;
	}
	if (!cJSON_IsArray(v))
		return false;
	cJSON *e;
	cJSON_ArrayForEach(e, v)
	{
		if (!cJSON_IsString(e))
			return false;
		if (sb->len)
			strbuf_putc(sb, ',');
		strbuf_puts(sb, e->valuestring);
	}
	return true;
}

/* Applies one key of the configuration's object to s->cfg (the ignore selectors are added to ig,
 * parsed once all keys are read); path and text name the file for diagnostics. Returns 0, or
 * ATLAS_EINVAL after recording in s->d why the key's value is wrong; an unknown key is a warning
 * and 0. */
static int config_key(site *s, const char *path, const char *text, cJSON *item, strbuf *ig)
{
	int rc = 0;
	const char *k = item->string;
	int line = key_line(text, k);
	if (strcmp(k, "site_url") == 0) {
		if (!cJSON_IsString(item)) {
			diag_add(s->d, path, line, DIAG_ERROR, "site_url must be a string");
			return ATLAS_EINVAL;
		}
		s->cfg.site_url = strdup(item->valuestring);
		size_t l = strlen(s->cfg.site_url);
		while (l && s->cfg.site_url[l - 1] == '/')
			s->cfg.site_url[--l] = '\0';
	} else if (strcmp(k, "exclude") == 0) {
		cJSON *e;
		bool ok = cJSON_IsArray(item);
		cJSON_ArrayForEach(e, item) ok = ok && cJSON_IsString(e);
		if (!ok) {
			diag_add(s->d, path, line, DIAG_ERROR, "exclude must be an array of glob strings");
			return ATLAS_EINVAL;
		}
		int cnt = cJSON_GetArraySize(item);
		s->cfg.exclude = calloc((size_t)(cnt ? cnt : 1), sizeof(char *));
		cJSON_ArrayForEach(e, item) if (s->cfg.exclude)
			s->cfg.exclude[s->cfg.nexclude++] = strdup(e->valuestring);
	} else if (strcmp(k, "content") == 0 || strcmp(k, "ignore") == 0) {
		strbuf t = STRBUF_INIT;
		if (!selector_text(item, &t)) {
			diag_add(s->d, path, line, DIAG_ERROR, "%s must be a selector string or an array of them", k);
			rc = ATLAS_EINVAL;
		} else if (k[0] == 'c') {
			char err[200];
			if (!(s->cfg.content = html_sel_parse(strbuf_str(&t), err, sizeof(err)))) {
				diag_add(s->d, path, line, DIAG_ERROR, "content: %s", err);
				rc = ATLAS_EINVAL;
			}
		} else {
			strbuf_putc(ig, ',');
			strbuf_puts(ig, strbuf_str(&t));
		}
		strbuf_free(&t);
	} else if (strcmp(k, "topic_root") == 0) {
		if (!cJSON_IsString(item) || item->valuestring[0] != '/') {
			diag_add(s->d, path, line, DIAG_ERROR, "topic_root must be a path starting with /");
			return ATLAS_EINVAL;
		}
		strbuf t = STRBUF_INIT;
		strbuf_puts(&t, item->valuestring + 1);
		if (t.len && t.buf[t.len - 1] != '/')
			strbuf_putc(&t, '/');
		free(s->cfg.topic_root);
		s->cfg.topic_root = strbuf_detach(&t);
		if (!s->cfg.topic_root)
			s->cfg.topic_root = strdup("");
	} else if (strcmp(k, "types") == 0) {
		if (!cJSON_IsObject(item)) {
			diag_add(s->d, path, line, DIAG_ERROR,
				 "types must be an object of globs and page types (explainer, guide, topic, page)");
			return ATLAS_EINVAL;
		}
		int cnt = cJSON_GetArraySize(item);
		s->cfg.types = calloc((size_t)(cnt ? cnt : 1), sizeof(type_rule));
		cJSON *e;
		cJSON_ArrayForEach(e, item)
		{
			int t = cJSON_IsString(e) ? type_of_name(e->valuestring) : -1;
			if (t < 0) {
				diag_add(s->d, path, key_line(text, e->string), DIAG_ERROR,
					 "type of \"%s\" must be explainer, guide, topic or page", e->string);
				rc = ATLAS_EINVAL;
			} else if (s->cfg.types) {
				s->cfg.types[s->cfg.ntypes++] = (type_rule){ strdup(e->string), (enum atlas_page_type)t };
			}
		}
	} else {
		diag_add(s->d, path, line, warn_sev(s), "unknown configuration key \"%s\"", k);
	}
	return rc;
}

/* Reads the configuration; a missing default file is no configuration. Returns 0, or after
 * recording why in d ATLAS_EIO when the file cannot be read or ATLAS_EINVAL when it is not a valid
 * configuration (every problem found is recorded; the first code found is returned). */
int config_load(site *s, const char *path)
{
	char def[PATH_MAX];
	bool given = path != NULL;
	if (!path) {
		snprintf(def, sizeof(def), "%s/atlas.json", s->dir);
		path = def;
	}
	strbuf ig = STRBUF_INIT;
	strbuf_puts(&ig, default_ignore);
	FILE *f = fopen(path, "rb");
	char *text = NULL;
	cJSON *root = NULL;
	int rc = 0;
	if (!f) {
		if (given || errno != ENOENT) {
			diag_add(s->d, path, 0, DIAG_ERROR, "cannot read the configuration: %s", strerror(errno));
			rc = ATLAS_EIO;
		}
		goto selectors;
	}
	strbuf sb = STRBUF_INIT;
	char buf[8192];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_append(&sb, buf, n);
	fclose(f);
	text = strbuf_detach(&sb);
	if (!text)
		text = strdup("");
	s->cfg.file = strdup(path);
	root = cJSON_Parse(text ? text : "");
	if (!cJSON_IsObject(root)) {
		diag_add(s->d, path, 1, DIAG_ERROR, "the configuration is not a JSON object");
		rc = ATLAS_EINVAL;
		goto selectors;
	}
	cJSON *item;
	cJSON_ArrayForEach(item, root)
	{
		int krc = config_key(s, path, text, item, &ig);
		if (krc && !rc)
			rc = krc;
	}
selectors: {
	char err[200];
	if (!(s->cfg.ignore = html_sel_parse(strbuf_str(&ig), err, sizeof(err)))) {
		diag_add(s->d, path, key_line(text ? text : "", "ignore"), DIAG_ERROR, "ignore: %s", err);
		if (!rc)
			rc = ATLAS_EINVAL;
	}
}
	strbuf_free(&ig);
	cJSON_Delete(root);
	free(text);
	return rc;
}

