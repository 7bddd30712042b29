/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * `dshbox serve --jobs N`: requests answered by N threads (docs/serve.md).  A request goes to the
 * worker its key (the path it names, lexically absolute) hashes to, so requests naming one path
 * are done and answered in the order sent, and requests on different paths overlap (a write
 * spends most of its time in fsync).  Each answer is one write(2) of its line under a lock, so
 * lines never interleave; the host matches answers by id.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/hash.h"
#include "common/write_all.h"
#include "fence/serve.h"
#include "fence/serve_pool.h"

/* Requests queued per worker before the reader waits: bounds the memory a fast host can pin. */
#define QUEUE_MAX 16

struct item {
	struct dsh_serve_request *req;
	struct item *next;
};

struct worker {
	struct dsh_serve_pool *pool;
	pthread_t thread;
	struct item *head, *tail;
	size_t queued;
	pthread_cond_t work;
};

struct dsh_serve_pool {
	const struct dsh_policy *p;
	int out_fd;
	pthread_mutex_t lock;   /* the queues, closing, out_err */
	pthread_cond_t space;   /* a queue has room again */
	pthread_mutex_t out;    /* one answer line at a time on out_fd */
	bool closing;
	int out_err;            /* the first failure to answer (-EPIPE: the host is gone; -ENOMEM) */
	size_t n;
	struct worker *w;
};

static void fail(struct dsh_serve_pool *pool, int r)
{
	pthread_mutex_lock(&pool->lock);
	if (!pool->out_err)
		pool->out_err = r;
	pthread_cond_broadcast(&pool->space);
	pthread_mutex_unlock(&pool->lock);
}

int dsh_serve_pool_write(struct dsh_serve_pool *pool, char *line, size_t n)
{
	/* The newline goes with the line, in the same write. */
	line[n] = '\n';
	pthread_mutex_lock(&pool->out);
	int r = dsh_write_all(pool->out_fd, line, n + 1);
	pthread_mutex_unlock(&pool->out);
	line[n] = '\0';
	if (r < 0)
		fail(pool, r);
	return r;
}

static void *work(void *data)
{
	struct worker *w = data;
	struct dsh_serve_pool *pool = w->pool;
	for (;;) {
		pthread_mutex_lock(&pool->lock);
		while (!w->head && !pool->closing)
			pthread_cond_wait(&w->work, &pool->lock);
		struct item *it = w->head;
		if (it) {
			w->head = it->next;
			if (!w->head)
				w->tail = NULL;
			w->queued--;
			pthread_cond_broadcast(&pool->space);
		}
		bool gone = pool->out_err != 0;
		pthread_mutex_unlock(&pool->lock);
		if (!it)
			return NULL;
		if (!gone) {
			_cleanup_error_ struct dsh_error *err = NULL;
			_cleanup_free_ char *a = NULL;
			int r = dsh_serve_request_answer(pool->p, it->req, &a, &err);
			if (r < 0)
				fail(pool, r);
			else
				(void)dsh_serve_pool_write(pool, a, strlen(a));
		}
		dsh_serve_request_free(it->req);
		free(it);
	}
}

/* Spreads keys over the workers; equal keys land on one worker, which keeps their order. */
static size_t key_hash(const char *k)
{
	return (size_t)dsh_fnv1a_str(k ? k : "");
}

int dsh_serve_pool_submit(struct dsh_serve_pool *pool, struct dsh_serve_request *req)
{
	struct item *it = calloc(1, sizeof(*it));
	if (!it) {
		dsh_serve_request_free(req);
		return -ENOMEM;
	}
	it->req = req;
	struct worker *w = &pool->w[key_hash(dsh_serve_request_key(req)) % pool->n];
	pthread_mutex_lock(&pool->lock);
	while (w->queued >= QUEUE_MAX && !pool->out_err)
		pthread_cond_wait(&pool->space, &pool->lock);
	int r = pool->out_err;
	if (!r) {
		if (w->tail)
			w->tail->next = it;
		else
			w->head = it;
		w->tail = it;
		w->queued++;
		pthread_cond_signal(&w->work);
	}
	pthread_mutex_unlock(&pool->lock);
	if (r) {
		dsh_serve_request_free(req);
		free(it);
	}
	return r;
}

int dsh_serve_pool_finish(struct dsh_serve_pool *pool)
{
	pthread_mutex_lock(&pool->lock);
	pool->closing = true;
	for (size_t i = 0; i < pool->n; i++)
		pthread_cond_broadcast(&pool->w[i].work);
	pthread_mutex_unlock(&pool->lock);
	for (size_t i = 0; i < pool->n; i++) {
		pthread_join(pool->w[i].thread, NULL);
		pthread_cond_destroy(&pool->w[i].work);
	}
	int r = pool->out_err;
	pthread_mutex_destroy(&pool->lock);
	pthread_mutex_destroy(&pool->out);
	pthread_cond_destroy(&pool->space);
	free(pool->w);
	free(pool);
	return r;
}

int dsh_serve_pool_new(const struct dsh_policy *p, int out_fd, size_t n, struct dsh_serve_pool **ret,
		       struct dsh_error **err)
{
	struct dsh_serve_pool *pool = calloc(1, sizeof(*pool));
	struct worker *w = n ? calloc(n, sizeof(*w)) : NULL;
	if (!pool || !w) {
		free(pool);
		free(w);
		return dsh_err(err, DSH_ERR_SYSTEM, ENOMEM, "serve: out of memory");
	}
	pool->p = p;
	pool->out_fd = out_fd;
	pool->w = w;
	pthread_mutex_init(&pool->lock, NULL);
	pthread_mutex_init(&pool->out, NULL);
	pthread_cond_init(&pool->space, NULL);
	for (size_t i = 0; i < n; i++) {
		w[i].pool = pool;
		pthread_cond_init(&w[i].work, NULL);
		int r = pthread_create(&w[i].thread, NULL, work, &w[i]);
		if (r != 0) {
			/* The workers made so far end; no request was taken yet. */
			pthread_cond_destroy(&w[i].work);
			pool->n = i;
			(void)dsh_serve_pool_finish(pool);
			return dsh_err(err, DSH_ERR_SYSTEM, r, "serve: start worker %zu of %zu", i + 1, n);
		}
		pool->n = i + 1;
	}
	*ret = pool;
	return 0;
}
