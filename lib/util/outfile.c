/* outfile.c - temporary file + rename, groups of outputs committed
 * together; see outfile.h. */
#include "outfile.h"

#include "chakra/output.h"
#include "chakra/stream.h"
#include "outset.h"
#include "vec.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define OUT_BUF (1u << 20)

/* How a temporary went into place during a batch, so that a failed batch
 * can put back what was there. */
enum { PLACED_NONE = 0, PLACED_NEW, PLACED_SWAPPED };

struct outfile {
  int fd;
  int in_place;  /* a special file or standard output: no temporary, no rename */
  int own_fd;    /* in place: fd was opened here and is closed on commit */
  gzFile gz;
  char *path;    /* as the caller named it (messages) */
  char *target;  /* what the rename replaces: path, or a symlink's final target */
  char *tmp;
  struct tmpreg_slot *reg;
  char *buf;
  size_t used;
  int failed;
  int parked;    /* the temporary is closed and buf freed until the next write */
  int finished;  /* written out and closed: only the rename is left */
  int claimed;   /* one of the outputs the program declared (outset.h) */
  int held;      /* taken by a group or by the program's set */
  int placed;    /* PLACED_*, during a batch's renames */
  int has_sink;  /* bytes go to sink (a FILE* or a callback), in place */
  chakra_sink sink;
};

/* ---- the registry of live temporaries --------------------------------------
 *
 * chakra_output_interrupt() runs in a signal handler while other threads
 * may be creating temporaries. It closes the door first (no temporary is
 * created after that), waits for the creations already inside to be
 * registered, then unlinks every live temporary. A creator enters by
 * incrementing `creating`, then reading `closed`; the handler sets
 * `closed`, then reads `creating` (all sequentially consistent), so either
 * the creator sees the door closed and backs out, or the handler sees it
 * inside and waits for it. Inside, a creator has the cleanup signals
 * blocked (the handler never waits for its own thread), takes no lock and
 * allocates nothing (the handler may have interrupted the thread that
 * holds the allocator's lock).
 *
 * Slots are never freed, only recycled through free lists by size class,
 * so registering is O(1) (a 32k-rank synth once spent 78% of its time
 * walking the list for a free slot). The handler walks the list of every
 * slot and unlinks the names of those marked live; names are written only
 * inside the door, so none changes under it. */

#define SLOT_CLASSES 12 /* names of up to 64 << 11 bytes */

typedef struct tmpreg_slot {
  atomic_int live;
  unsigned cls;                  /* the name holds 64 << cls bytes */
  int listed;                    /* on the handler's list */
  struct tmpreg_slot *next;      /* the handler's list; set once */
  struct tmpreg_slot *next_free; /* under tmpreg_mu */
  char name[];
} tmpreg_slot;

static _Atomic(tmpreg_slot *) tmpreg_head;
static tmpreg_slot *tmpreg_free[SLOT_CLASSES];
static pthread_mutex_t tmpreg_mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_int door_closed, door_inside;
/* Batches renaming into place, and a cleanup signal that came meanwhile. */
static atomic_int placing, deferred_signal;

/* A slot for a name of n bytes, outside the door (it may allocate). */
static tmpreg_slot *slot_take(size_t n) {
  unsigned cls = 0;
  while (cls < SLOT_CLASSES && ((size_t)64 << cls) < n) cls++;
  if (cls == SLOT_CLASSES) return NULL;
  pthread_mutex_lock(&tmpreg_mu);
  tmpreg_slot *s = tmpreg_free[cls];
  if (s) tmpreg_free[cls] = s->next_free;
  pthread_mutex_unlock(&tmpreg_mu);
  if (s) return s;
  s = malloc(sizeof *s + ((size_t)64 << cls));
  if (!s) return NULL; /* the file is still removed on every ordinary path */
  atomic_init(&s->live, 0);
  s->cls = cls;
  s->listed = 0;
  s->next = s->next_free = NULL;
  return s;
}

static void slot_give(tmpreg_slot *s) {
  if (!s) return;
  atomic_store(&s->live, 0);
  pthread_mutex_lock(&tmpreg_mu);
  s->next_free = tmpreg_free[s->cls];
  tmpreg_free[s->cls] = s;
  pthread_mutex_unlock(&tmpreg_mu);
}

/* Inside the door: the slot now names a file that exists. */
static void slot_publish(tmpreg_slot *s, const char *name) {
  memcpy(s->name, name, strlen(name) + 1);
  atomic_store(&s->live, 1);
  if (s->listed) return;
  s->listed = 1;
  s->next = atomic_load(&tmpreg_head);
  while (!atomic_compare_exchange_weak(&tmpreg_head, &s->next, s)) {
  }
}

static int door_enter(void) {
  atomic_fetch_add(&door_inside, 1);
  if (!atomic_load(&door_closed)) return 1;
  atomic_fetch_sub(&door_inside, 1);
  return 0;
}

static void door_leave(void) { atomic_fetch_sub(&door_inside, 1); }

/* Async-signal-safe: nanosleep and unlink only. The wait is bounded in case
 * a creator is stopped (a debugger): then its file may stay. */
static void close_door_and_remove(void) {
  atomic_store(&door_closed, 1);
  struct timespec nap = {0, 100000};
  for (int i = 0; i < 50000 && atomic_load(&door_inside) > 0; i++) nanosleep(&nap, NULL);
  for (tmpreg_slot *s = atomic_load(&tmpreg_head); s; s = s->next)
    if (atomic_load(&s->live)) unlink(s->name);
}

void chakra_output_remove_temporaries(void) { close_door_and_remove(); }

/* The same store-then-load pairing as the door: the handler records the
 * signal, then reads `placing`; the last batch to finish placing clears
 * `placing`, then takes the signal. One of them sees the other. */
int chakra_output_interrupt(int sig) {
  atomic_store(&deferred_signal, sig);
  if (atomic_load(&placing) > 0) return 1;
  atomic_store(&deferred_signal, 0);
  close_door_and_remove();
  return 0;
}

static void placing_begin(void) { atomic_fetch_add(&placing, 1); }

/* A signal deferred while files were renamed is delivered now, to the
 * handler that deferred it (which then removes the temporaries left). */
static void placing_end(void) {
  if (atomic_fetch_sub(&placing, 1) != 1) return;
  int sig = atomic_exchange(&deferred_signal, 0);
  if (sig) raise(sig);
}

static void tmpreg_remove(tmpreg_slot *s) { slot_give(s); }

int outfile_name_is_gzip(const char *path) {
  size_t n = strlen(path);
  return n > 3 && strcmp(path + n - 3, ".gz") == 0;
}

/* Creates f->tmp (O_EXCL) and registers it, inside the door. */
static int create_registered(outfile *f, tmpreg_slot **slot, int *closed) {
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT), sigaddset(&block, SIGTERM), sigaddset(&block, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  int e = 0;
  if (!door_enter()) {
    *closed = 1;
    e = EINTR;
  } else {
    f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    e = f->fd < 0 ? errno : 0;
    if (f->fd >= 0 && *slot) {
      slot_publish(*slot, f->tmp);
      f->reg = *slot;
      *slot = NULL;
    }
    door_leave();
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return e;
}

static int open_temp(outfile *f, chakra_error *err) {
  const char *slash = strrchr(f->target, '/');
  size_t dirlen = slash ? (size_t)(slash - f->target) + 1 : 0;
  const char *base = slash ? slash + 1 : f->target;
  size_t n = dirlen + strlen(base) + 16;
  f->tmp = malloc(n);
  if (!f->tmp) return chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", f->path);
  snprintf(f->tmp, n, "%.*s.%s.XXXXXX", (int)dirlen, f->target, base);
  tmpreg_slot *slot = slot_take(strlen(f->tmp) + 1);
  /* Like mkstemp, but created 0666 so that the umask applies as to any file
   * the user creates. (Reading the umask with umask() would change it for
   * a moment in every thread of the process.) */
  static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  static _Atomic uint64_t counter;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t r = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ ((uint64_t)getpid() << 40) ^
               (counter++ * 0x9e3779b97f4a7c15ull);
  char *x = f->tmp + strlen(f->tmp) - 6;
  int e = EEXIST, closed = 0;
  for (int attempt = 0; attempt < 1000 && e == EEXIST; attempt++) {
    for (int i = 0; i < 6; i++) {
      r = r * 6364136223846793005ull + 1442695040888963407ull;
      x[i] = chars[(r >> 33) % 62];
    }
    e = create_registered(f, &slot, &closed);
  }
  slot_give(slot); /* not used */
  if (f->fd < 0) {
    free(f->tmp);
    f->tmp = NULL;
    if (closed) return chakra_error_set(err, CHAKRA_EIO, "%s: cannot create output: the program is being interrupted", f->path);
    return chakra_error_set(err, CHAKRA_EIO, "%s: cannot create output: %s", f->path, strerror(e));
  }
  return 0;
}

int outfile_is_std_stream(const struct stat *st) {
  struct stat o;
  for (int fd = 1; fd <= 2; fd++)
    if (fstat(fd, &o) == 0 && o.st_dev == st->st_dev && o.st_ino == st->st_ino) return fd;
  return 0;
}

char *outfile_final_target(const char *path) {
  char *cur = strdup(path);
  for (int depth = 0; cur && depth < 40; depth++) {
    struct stat st;
    if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) return cur;
    char link[PATH_MAX];
    ssize_t k = readlink(cur, link, sizeof link - 1);
    if (k < 0) return cur;
    link[k] = 0;
    const char *slash = strrchr(cur, '/');
    size_t dirlen = link[0] != '/' && slash ? (size_t)(slash - cur) + 1 : 0;
    char *next = malloc(dirlen + (size_t)k + 1);
    if (next) {
      memcpy(next, cur, dirlen);
      memcpy(next + dirlen, link, (size_t)k + 1);
    }
    free(cur);
    cur = next;
  }
  free(cur);
  return NULL;
}

/* Decides how path is written: in place (standard output, special files)
 * or through a temporary beside its final target. */
static int open_destination(outfile *f, const char *path, chakra_error *err) {
  if (strcmp(path, "-") == 0) {
    f->in_place = 1;
    f->fd = 1;
    return 0;
  }
  if (!*path) return chakra_error_set(err, CHAKRA_EINVAL, "output path is empty");
  struct stat st;
  if (stat(path, &st) == 0) {
    if (S_ISDIR(st.st_mode))
      return chakra_error_set(err, CHAKRA_EINVAL, "%s: is a directory, expected a file", path);
    int std = outfile_is_std_stream(&st);
    if (std || !S_ISREG(st.st_mode)) {
      f->in_place = 1;
      f->fd = std ? std : open(path, O_WRONLY | O_CLOEXEC);
      f->own_fd = !std;
      if (f->fd < 0)
        return chakra_error_set(err, CHAKRA_EIO, "%s: cannot open for writing: %s", path, strerror(errno));
      return 0;
    }
  }
  int claimed = outset_claims(path, err);
  if (claimed < 0) return claimed;
  f->claimed = claimed;
  f->target = outfile_final_target(path);
  if (!f->target)
    return chakra_error_set(err, CHAKRA_EIO, "%s: cannot resolve the symbolic link (a loop?)", path);
  return open_temp(f, err);
}

int outfile_open(outfile **out, const char *path, int gzip, chakra_error *err) {
  *out = NULL;
  outfile *f = calloc(1, sizeof *f);
  if (!f) return chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", path);
  f->fd = -1;
  f->path = strdup(path);
  f->buf = malloc(OUT_BUF);
  if (!f->path || !f->buf) {
    outfile_discard(f);
    return chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", path);
  }
  int rc = open_destination(f, path, err);
  if (!rc && gzip) {
    int fd2 = dup(f->fd);
    f->gz = fd2 >= 0 ? gzdopen(fd2, "wb6") : NULL;
    if (!f->gz) {
      if (fd2 >= 0) close(fd2);
      rc = chakra_error_set(err, CHAKRA_ENOMEM, "%s: cannot start gzip encoder", path);
    }
  }
  if (rc) {
    f->claimed = 0; /* never started: nothing of the set is lost */
    outfile_discard(f);
    return rc;
  }
  *out = f;
  return 0;
}

int outfile_open_sink(outfile **out, const chakra_sink *sink, chakra_error *err) {
  *out = NULL;
  const char *name = chakra_sink_name(sink);
  if (!sink->file == !sink->write)
    return chakra_error_set(err, CHAKRA_EINVAL, "%s: an output sink needs a FILE* or a write callback (one of them)", name);
  outfile *f = calloc(1, sizeof *f);
  if (!f) return chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", name);
  f->fd = -1;
  f->in_place = 1;
  f->has_sink = 1;
  f->sink = *sink;
  f->path = strdup(name);
  f->buf = malloc(OUT_BUF);
  if (!f->path || !f->buf) {
    outfile_discard(f);
    return chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", name);
  }
  *out = f;
  return 0;
}

const char *chakra_sink_name(const chakra_sink *out) {
  return out->name ? out->name : out->file ? "<stream>" : "<callback>";
}

static int write_all(outfile *f, const char *p, size_t n, chakra_error *err) {
  if (f->has_sink) {
    int bad = f->sink.file ? fwrite(p, 1, n, f->sink.file) != n : f->sink.write(f->sink.ctx, p, n) != 0;
    if (!bad || n == 0) return 0;
    f->failed = 1;
    return chakra_error_set(err, CHAKRA_EIO, "%s: write failed", f->path);
  }
  if (f->gz) {
    while (n > 0) {
      unsigned k = n > (1u << 30) ? (1u << 30) : (unsigned)n;
      if (gzwrite(f->gz, p, k) != (int)k) {
        f->failed = 1;
        return chakra_error_set(err, CHAKRA_EIO, "%s: write failed (gzip)", f->path);
      }
      p += k;
      n -= k;
    }
    return 0;
  }
  while (n > 0) {
    ssize_t k = write(f->fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) {
      f->failed = 1;
      return chakra_error_set(err, CHAKRA_EIO, "%s: write failed: %s", f->path, strerror(errno));
    }
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

static int flush_buf(outfile *f, chakra_error *err) {
  int rc = write_all(f, f->buf, f->used, err);
  f->used = 0;
  return rc;
}

static int unpark(outfile *f, chakra_error *err);

int outfile_write(outfile *f, const void *data, size_t len, chakra_error *err) {
  if (f->failed) return chakra_error_set(err, CHAKRA_EIO, "%s: earlier write failed", f->path);
  if (f->parked) {
    int rc = unpark(f, err);
    if (rc) return rc;
  }
  /* large blocks (a jsonw buffer, a whole rank) go out without a copy */
  if (len > OUT_BUF / 2 || (len >= OUT_BUF / 64 && !f->used)) {
    int rc = f->used ? flush_buf(f, err) : 0;
    return rc ? rc : write_all(f, data, len, err);
  }
  if (f->used + len > OUT_BUF) {
    int rc = flush_buf(f, err);
    if (rc) return rc;
  }
  memcpy(f->buf + f->used, data, len);
  f->used += len;
  return 0;
}

char *outfile_reserve(outfile *f, size_t n, chakra_error *err) {
  if (n > OUT_BUF) {
    chakra_error_set(err, CHAKRA_EINVAL, "%s: reservation too large", f->path);
    return NULL;
  }
  if (f->parked && unpark(f, err)) return NULL;
  if (f->used + n > OUT_BUF && flush_buf(f, err)) return NULL;
  return f->buf + f->used;
}

void outfile_commit_bytes(outfile *f, size_t used) { f->used += used; }

/* The folder part of path ("." when there is none) into dir. */
static void folder_of(const char *path, char dir[PATH_MAX]) {
  const char *slash = strrchr(path, '/');
  if (!slash) snprintf(dir, PATH_MAX, ".");
  else snprintf(dir, PATH_MAX, "%.*s", slash == path ? 1 : (int)(slash - path), path);
}

/* Makes a completed rename durable: the directory entry is written too. */
static void sync_directory(const char *target) {
  char dir[PATH_MAX];
  folder_of(target, dir);
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    (void)fsync(fd); /* some file systems refuse; the data itself is already synced */
    close(fd);
  }
}

/* Writes out everything and closes the file; a temporary stays where it
 * is until it is placed. sync: fsync a temporary before closing it (a
 * parked one is reopened for that); batches pass 0 and make the whole
 * batch durable at once instead (durable_batch). Finishing twice is
 * finishing once. */
static int finish(outfile *f, int sync, chakra_error *err) {
  if (f->finished) return 0;
  if (f->parked && !f->failed && !sync) return f->finished = 1, 0; /* already written out and closed */
  if (f->parked && !f->failed) {
    f->fd = open(f->tmp, O_WRONLY | O_CLOEXEC);
    if (f->fd < 0) return chakra_error_set(err, CHAKRA_EIO, "%s: cannot reopen the output: %s", f->path, strerror(errno));
    f->parked = 0;
  }
  int rc = f->failed ? chakra_error_set(err, CHAKRA_EIO, "%s: earlier write failed", f->path)
                     : flush_buf(f, err);
  if (f->gz) {
    if (gzclose(f->gz) != Z_OK && !rc)
      rc = chakra_error_set(err, CHAKRA_EIO, "%s: write failed (gzip)", f->path);
    f->gz = NULL;
  }
  if (f->has_sink && f->sink.file && fflush(f->sink.file) != 0 && !rc)
    rc = chakra_error_set(err, CHAKRA_EIO, "%s: write failed: %s", f->path, strerror(errno));
  if (!f->in_place) {
    if (!rc && sync && fsync(f->fd) != 0)
      rc = chakra_error_set(err, CHAKRA_EIO, "%s: write failed (fsync): %s", f->path, strerror(errno));
    if (f->fd >= 0 && close(f->fd) != 0 && !rc)
      rc = chakra_error_set(err, CHAKRA_EIO, "%s: write failed: %s", f->path, strerror(errno));
    f->fd = -1;
  } else if (f->own_fd) {
    if (close(f->fd) != 0 && !rc)
      rc = chakra_error_set(err, CHAKRA_EIO, "%s: write failed: %s", f->path, strerror(errno));
    f->fd = -1;
  }
  if (!rc) f->finished = 1;
  return rc;
}

/* The temporary is gone (renamed, or removed): forget it. */
static void forget_temp(outfile *f) {
  tmpreg_remove(f->reg);
  f->reg = NULL;
  free(f->tmp);
  f->tmp = NULL;
}

/* Renames a finished temporary into place (nothing to do in place). */
static int place(outfile *f, chakra_error *err) {
  if (f->in_place) return 0;
  if (rename(f->tmp, f->target) != 0)
    return chakra_error_set(err, CHAKRA_EIO, "%s: cannot rename into place: %s", f->path, strerror(errno));
  forget_temp(f);
  return 0;
}

static int commit_now(outfile *f, chakra_error *err) {
  int rc = finish(f, 1, err);
  if (!rc) rc = place(f, err);
  if (!rc && !f->in_place) sync_directory(f->target);
  outfile_discard(f);
  return rc;
}

/* ---- durability of a batch ----------------------------------------------
 *
 * One fsync per file costs a journal commit each (on ext4 about 2 ms on
 * this project's machines: 4.5 s for 1,024 ranks). A batch is instead
 * written and closed unsynced, then made durable in one step before any
 * rename: syncfs() on each file system concerned (Linux 5.8 and later
 * report writeback errors through it; older kernels do not, so they, and
 * other systems, fsync the files one by one). Then the renames, then one
 * fsync per folder. A crash before the renames leaves only temporaries; a
 * crash after leaves complete files under final names (their data was
 * durable before the first rename). */

/* The distinct folders of the batch's temporaries (NULL-terminated, one
 * malloc), or NULL when out of memory. */
static char **batch_folders(outfile **v, size_t n) {
  size_t k = 0;
  char **d = calloc(n + 1, sizeof *d);
  for (size_t i = 0; d && i < n; i++) {
    if (v[i]->in_place) continue;
    char dir[PATH_MAX];
    folder_of(v[i]->target, dir);
    size_t j = 0;
    while (j < k && strcmp(d[j], dir) != 0) j++;
    if (j == k && !(d[k++] = strdup(dir))) {
      for (j = 0; j < k; j++) free(d[j]);
      free(d);
      return NULL;
    }
  }
  return d;
}

static void free_folders(char **d) {
  for (size_t j = 0; d && d[j]; j++) free(d[j]);
  free(d);
}

/* 1 when syncfs() reports writeback errors (Linux 5.8 or later). */
static int syncfs_reports_errors(void) {
#ifdef __linux__
  struct utsname u;
  int major = 0, minor = 0;
  if (uname(&u) != 0 || sscanf(u.release, "%d.%d", &major, &minor) != 2) return 0;
  return major > 5 || (major == 5 && minor >= 8);
#else
  return 0;
#endif
}

/* syncfs() once per file system holding one of the folders; 1 when that
 * was done for every folder (then the batch is durable), 0 when the files
 * must be synced one by one, or a negative status. */
static int sync_filesystems(char **dirs, chakra_error *err) {
#ifdef __linux__
  if (!syncfs_reports_errors()) return 0;
  dev_t done[16];
  size_t n_done = 0;
  for (size_t j = 0; dirs[j]; j++) {
    int fd = open(dirs[j], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
      if (fd >= 0) close(fd);
      return 0;
    }
    size_t k = 0;
    while (k < n_done && done[k] != st.st_dev) k++;
    int rc = 0;
    if (k == n_done) {
      if (syncfs(fd) != 0) {
        int e = errno;
        rc = e == ENOSYS || e == EOPNOTSUPP || e == EINVAL
                 ? 1 /* not available: sync file by file */
                 : chakra_error_set(err, CHAKRA_EIO, "%s: write failed (syncfs): %s", dirs[j], strerror(e));
      } else if (n_done < sizeof done / sizeof done[0]) {
        done[n_done++] = st.st_dev;
      }
    }
    close(fd);
    if (rc) return rc > 0 ? 0 : rc;
  }
  return 1;
#else
  (void)dirs;
  (void)err;
  return 0;
#endif
}

/* fsync of each closed temporary, one descriptor at a time. */
static int sync_files(outfile **v, size_t n, chakra_error *err) {
  for (size_t i = 0; i < n; i++) {
    if (v[i]->in_place) continue;
    int fd = open(v[i]->tmp, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return chakra_error_set(err, CHAKRA_EIO, "%s: cannot reopen the output: %s", v[i]->path, strerror(errno));
    int rc = fsync(fd) == 0 ? 0
                            : chakra_error_set(err, CHAKRA_EIO, "%s: write failed (fsync): %s", v[i]->path,
                                               strerror(errno));
    close(fd);
    if (rc) return rc;
  }
  return 0;
}

static void sync_folders(char **dirs) {
  for (size_t j = 0; dirs[j]; j++) {
    int fd = open(dirs[j], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
      (void)fsync(fd); /* some file systems refuse; the data itself is already synced */
      close(fd);
    }
  }
}

/* ---- placing a batch: all or none ------------------------------------------
 *
 * An existing regular file is exchanged with its replacement
 * (renameat2 RENAME_EXCHANGE), so until the whole batch is in place the old
 * file lives on under the temporary's name and can be put back. Where the
 * file system cannot exchange, the replacement is renamed over it and a
 * failed batch can only remove what it placed. Cleanup signals that come
 * while the batch is being placed wait until it is (chakra_output_interrupt),
 * so an interrupted program leaves either the old files or the new ones. */

static int put_in_place(outfile *f, chakra_error *err) {
  struct stat st;
#ifdef RENAME_EXCHANGE
  if (lstat(f->target, &st) == 0 && S_ISREG(st.st_mode)) {
    if (renameat2(AT_FDCWD, f->tmp, AT_FDCWD, f->target, RENAME_EXCHANGE) == 0) {
      f->placed = PLACED_SWAPPED;
      return 0;
    }
    if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
      return chakra_error_set(err, CHAKRA_EIO, "%s: cannot rename into place: %s", f->path, strerror(errno));
  }
#else
  (void)st;
#endif
  if (rename(f->tmp, f->target) != 0)
    return chakra_error_set(err, CHAKRA_EIO, "%s: cannot rename into place: %s", f->path, strerror(errno));
  f->placed = PLACED_NEW;
  return 0;
}

/* Undoes put_in_place: the old file back under its name, the replacement
 * back under the temporary's (removed with it). */
static void put_back(outfile *f) {
#ifdef RENAME_EXCHANGE
  if (f->placed == PLACED_SWAPPED) (void)renameat2(AT_FDCWD, f->target, AT_FDCWD, f->tmp, RENAME_EXCHANGE);
#endif
  if (f->placed == PLACED_NEW) (void)unlink(f->target);
  f->placed = PLACED_NONE;
}

/* After the whole batch is in place: an exchanged temporary now holds the
 * old file, which goes. */
static void settle(outfile *f) {
  if (f->placed == PLACED_SWAPPED) (void)unlink(f->tmp);
  forget_temp(f);
}

static int place_all(outfile **v, size_t n, chakra_error *err) {
  placing_begin();
  int rc = 0;
  size_t k = 0;
  for (; k < n && !rc; k++)
    if (!v[k]->in_place) rc = put_in_place(v[k], err);
  if (rc) /* v[k - 1] failed */
    for (size_t i = k - 1; i-- > 0;) put_back(v[i]);
  placing_end();
  for (size_t i = 0; i < n && !rc; i++)
    if (!v[i]->in_place) settle(v[i]);
  return rc;
}

/* Below this many files, an fsync each costs less than syncing whole file
 * systems, which also flushes whatever else is being written there. */
#define SMALL_BATCH 8

/* Commits finished or unfinished files v[0..n) all or none; frees them. */
static int commit_batch(outfile **v, size_t n, chakra_error *err) {
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) rc = finish(v[i], 0, err);
  char **dirs = rc ? NULL : batch_folders(v, n);
  if (!rc && !dirs) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (!rc) {
    int whole = n > SMALL_BATCH ? sync_filesystems(dirs, err) : 0;
    rc = whole < 0 ? whole : whole ? 0 : sync_files(v, n, err);
  }
  if (!rc) rc = place_all(v, n, err);
  if (!rc) sync_folders(dirs);
  free_folders(dirs);
  for (size_t i = 0; i < n; i++) {
    v[i]->held = 0;
    v[i]->claimed = 0; /* committed or given up with the batch: not lost */
    outfile_discard(v[i]);
  }
  return rc;
}

int outfile_commit_held(outfile **v, size_t n, chakra_error *err) { return commit_batch(v, n, err); }

/* ---- groups ----------------------------------------------------------------- */

typedef struct group {
  outfile **v;
  size_t n, cap;
  int depth;  /* open groups of this thread (nested ones join the outermost) */
  int failed; /* an inner group ended without success, or holding failed */
} group;

static _Thread_local group tgroup;

/* Whether a commit of f holds it (a group's or the program's set) rather
 * than placing it now. */
static int held_at_commit(const outfile *f) { return !f->in_place && (tgroup.depth > 0 || f->claimed); }

/* Takes a finished f into the thread's group or the program's set. */
static int hold(outfile *f, chakra_error *err) {
  free(f->buf);
  f->buf = NULL;
  if (!tgroup.depth) {
    f->held = 1;
    outset_hold(f);
    return 0;
  }
  if (VEC_ROOM(tgroup.v, tgroup.n, tgroup.cap, 1)) {
    tgroup.failed = 1;
    outfile_discard(f);
    return chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  }
  f->held = 1;
  tgroup.v[tgroup.n++] = f;
  return 0;
}

int outfile_commit(outfile *f, chakra_error *err) {
  if (!held_at_commit(f)) return commit_now(f, err);
  int rc = finish(f, 0, err);
  if (rc) {
    outfile_discard(f);
    return rc;
  }
  return hold(f, err);
}

int outfile_commit_all(outfile **v, size_t n, chakra_error *err) {
  size_t now = 0;
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    if (!held_at_commit(v[i])) {
      v[now++] = v[i];
      continue;
    }
    if (!rc) rc = finish(v[i], 0, err);
    if (rc) outfile_discard(v[i]);
    else rc = hold(v[i], err);
  }
  if (!rc) return now ? commit_batch(v, now, err) : 0;
  for (size_t i = 0; i < now; i++) outfile_discard(v[i]);
  if (tgroup.depth) tgroup.failed = 1;
  return rc;
}

int outfile_group_begin(chakra_error *err) {
  (void)err;
  tgroup.depth++;
  return 0;
}

int outfile_group_end(int ok, chakra_error *err) {
  if (!ok) tgroup.failed = 1;
  if (--tgroup.depth > 0) return 0;
  group g = tgroup;
  memset(&tgroup, 0, sizeof tgroup);
  if (g.failed) {
    for (size_t i = 0; i < g.n; i++) {
      g.v[i]->held = 0; /* a claimed output that never reaches the set: lost */
      outfile_discard(g.v[i]);
    }
    free(g.v);
    return ok ? chakra_error_set(err, CHAKRA_ENOMEM, "out of memory") : 0;
  }
  /* the program's outputs go on to its set; the others go in place now */
  size_t now = 0;
  for (size_t i = 0; i < g.n; i++)
    if (g.v[i]->claimed) outset_hold(g.v[i]);
    else g.v[now++] = g.v[i];
  int rc = now ? commit_batch(g.v, now, err) : 0;
  free(g.v);
  return rc;
}

int outfile_park(outfile *f, chakra_error *err) {
  if (f->failed) return chakra_error_set(err, CHAKRA_EIO, "%s: earlier write failed", f->path);
  if (f->parked || f->in_place || f->gz) return 0;
  int rc = flush_buf(f, err);
#ifdef __linux__
  /* start writing the pages now, without waiting: the commit's one sync
   * then finds most of a large batch already on disk */
  if (!rc) (void)sync_file_range(f->fd, 0, 0, SYNC_FILE_RANGE_WRITE);
#endif
  if (close(f->fd) != 0 && !rc) {
    f->failed = 1;
    rc = chakra_error_set(err, CHAKRA_EIO, "%s: write failed: %s", f->path, strerror(errno));
  }
  f->fd = -1;
  free(f->buf);
  f->buf = NULL;
  f->parked = 1;
  return rc;
}

int outfile_is_open(const outfile *f) { return !f->parked; }

int outfile_can_park(const outfile *f) { return !f->parked && !f->in_place && !f->gz; }

/* Reopens a parked temporary for appending. */
static int unpark(outfile *f, chakra_error *err) {
  f->buf = malloc(OUT_BUF);
  if (!f->buf) {
    f->failed = 1;
    return chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", f->path);
  }
  f->fd = open(f->tmp, O_WRONLY | O_APPEND | O_CLOEXEC);
  if (f->fd < 0) {
    f->failed = 1;
    return chakra_error_set(err, CHAKRA_EIO, "%s: cannot reopen the output: %s", f->path, strerror(errno));
  }
  f->parked = 0;
  return 0;
}

void outfile_discard(outfile *f) {
  if (!f) return;
  if (f->claimed && !f->held) outset_lost(f->path);
  if (f->gz) gzclose(f->gz);
  if ((!f->in_place || f->own_fd) && f->fd >= 0) close(f->fd);
  if (f->tmp) {
    unlink(f->tmp);
    tmpreg_remove(f->reg);
    free(f->tmp);
  }
  free(f->target);
  free(f->buf);
  free(f->path);
  free(f);
}

const char *outfile_path(const outfile *f) { return f->path; }

int outfile_scratch(outfile **out, const char *beside, chakra_error *err) {
  *out = NULL;
  outfile *f = calloc(1, sizeof *f);
  if (!f || !(f->path = strdup(beside)) || !(f->target = strdup(beside))) {
    outfile_discard(f);
    return chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", beside);
  }
  f->fd = -1;
  int rc = open_temp(f, err);
  char *name = rc ? NULL : strdup(f->tmp);
  if (!rc && !name) rc = chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", beside);
  if (rc) {
    outfile_discard(f);
    return rc;
  }
  close(f->fd);
  f->fd = -1;
  free(f->path);
  f->path = name;
  *out = f;
  return 0;
}
