/* outfile.c - temporary file + rename; see outfile.h. */
#include "outfile.h"

#include "chakra/output.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <fcntl.h>
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
};

/* Live temporaries, for chakra_output_remove_temporaries() in a signal
 * handler. Slots are never freed, only recycled, so a handler walking the
 * list never touches freed memory; a slot's name is only read while its
 * state says live. */
typedef struct tmpreg_slot {
  _Atomic int state; /* 0 free, 1 live, 2 being changed */
  size_t cap;
  struct tmpreg_slot *next;
  char name[];
} tmpreg_slot;

static _Atomic(tmpreg_slot *) tmpreg_head;

static tmpreg_slot *tmpreg_add(const char *name) {
  size_t n = strlen(name) + 1;
  for (tmpreg_slot *s = atomic_load(&tmpreg_head); s; s = s->next) {
    int expect = 0;
    if (s->cap >= n && atomic_compare_exchange_strong(&s->state, &expect, 2)) {
      memcpy(s->name, name, n);
      atomic_store(&s->state, 1);
      return s;
    }
  }
  tmpreg_slot *s = malloc(sizeof *s + n);
  if (!s) return NULL; /* the file is still removed on every ordinary path */
  memcpy(s->name, name, n);
  s->cap = n;
  atomic_init(&s->state, 1);
  s->next = atomic_load(&tmpreg_head);
  while (!atomic_compare_exchange_weak(&tmpreg_head, &s->next, s)) {
  }
  return s;
}

static void tmpreg_remove(tmpreg_slot *s) {
  if (s) atomic_store(&s->state, 0);
}

void chakra_output_remove_temporaries(void) {
  for (tmpreg_slot *s = atomic_load(&tmpreg_head); s; s = s->next)
    if (atomic_load(&s->state) == 1) unlink(s->name);
}

int outfile_name_is_gzip(const char *path) {
  size_t n = strlen(path);
  return n > 3 && strcmp(path + n - 3, ".gz") == 0;
}

static int open_temp(outfile *f, chakra_error *err) {
  const char *slash = strrchr(f->target, '/');
  size_t dirlen = slash ? (size_t)(slash - f->target) + 1 : 0;
  const char *base = slash ? slash + 1 : f->target;
  size_t n = dirlen + strlen(base) + 16;
  f->tmp = malloc(n);
  if (!f->tmp) return chakra_error_set(err, CHAKRA_ENOMEM, "%s: out of memory", f->path);
  snprintf(f->tmp, n, "%.*s.%s.XXXXXX", (int)dirlen, f->target, base);
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
  int e = EEXIST;
  for (int attempt = 0; attempt < 1000 && e == EEXIST; attempt++) {
    for (int i = 0; i < 6; i++) {
      r = r * 6364136223846793005ull + 1442695040888963407ull;
      x[i] = chars[(r >> 33) % 62];
    }
    /* A signal between creating the file and registering it would leave
     * the file behind: the cleanup signals wait until both are done. */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT), sigaddset(&block, SIGTERM), sigaddset(&block, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    e = f->fd < 0 ? errno : 0;
    if (f->fd >= 0) f->reg = tmpreg_add(f->tmp);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
  }
  if (f->fd < 0) {
    free(f->tmp);
    f->tmp = NULL;
    return chakra_error_set(err, CHAKRA_EIO, "%s: cannot create output: %s", f->path, strerror(e));
  }
  return 0;
}

/* 1 if st is the file behind the process's standard output or error:
 * /dev/stdout, /dev/fd/1 or a shell redirection's file named again. */
static int is_std_stream(const struct stat *st) {
  struct stat o;
  for (int fd = 1; fd <= 2; fd++)
    if (fstat(fd, &o) == 0 && o.st_dev == st->st_dev && o.st_ino == st->st_ino) return fd;
  return 0;
}

/* The file a rename must replace for path: path itself, or the end of its
 * chain of symbolic links (which may not exist yet). NULL when out of
 * memory or the chain loops. */
static char *final_target(const char *path) {
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
    int std = is_std_stream(&st);
    if (std || !S_ISREG(st.st_mode)) {
      f->in_place = 1;
      f->fd = std ? std : open(path, O_WRONLY | O_CLOEXEC);
      f->own_fd = !std;
      if (f->fd < 0)
        return chakra_error_set(err, CHAKRA_EIO, "%s: cannot open for writing: %s", path, strerror(errno));
      return 0;
    }
  }
  f->target = final_target(path);
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
    outfile_discard(f);
    return rc;
  }
  *out = f;
  return 0;
}

static int write_all(outfile *f, const char *p, size_t n, chakra_error *err) {
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
 * is until place(). sync: fsync a temporary before closing it (a parked
 * one is reopened for that); commit_all passes 0 and makes the whole batch
 * durable at once instead (durable_batch). */
static int finish(outfile *f, int sync, chakra_error *err) {
  if (f->parked && !f->failed && !sync) return 0; /* already written out and closed */
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
  return rc;
}

/* Renames a finished temporary into place (nothing to do in place). */
static int place(outfile *f, chakra_error *err) {
  if (f->in_place) return 0;
  if (rename(f->tmp, f->target) != 0)
    return chakra_error_set(err, CHAKRA_EIO, "%s: cannot rename into place: %s", f->path, strerror(errno));
  tmpreg_remove(f->reg);
  f->reg = NULL;
  free(f->tmp);
  f->tmp = NULL;
  return 0;
}

int outfile_commit(outfile *f, chakra_error *err) {
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

int outfile_commit_all(outfile **v, size_t n, chakra_error *err) {
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) rc = finish(v[i], 0, err);
  char **dirs = rc ? NULL : batch_folders(v, n);
  if (!rc && !dirs) rc = chakra_error_set(err, CHAKRA_ENOMEM, "out of memory");
  if (!rc) {
    int whole = sync_filesystems(dirs, err);
    rc = whole < 0 ? whole : whole ? 0 : sync_files(v, n, err);
  }
  size_t placed = 0;
  for (; placed < n && !rc; placed++) rc = place(v[placed], err);
  if (rc) /* all or none: what was renamed already goes again */
    for (size_t i = 0; i + 1 < placed; i++)
      if (!v[i]->in_place) unlink(v[i]->target);
  if (!rc) sync_folders(dirs);
  free_folders(dirs);
  for (size_t i = 0; i < n; i++) outfile_discard(v[i]);
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

int chakra_output_check(const char *path, const char *const *inputs, size_t n, chakra_error *err) {
  if (!path || !*path) return chakra_error_set(err, CHAKRA_EINVAL, "output path is empty");
  if (strcmp(path, "-") == 0) return 0;
  struct stat st;
  int exists = stat(path, &st) == 0;
  if (exists && S_ISDIR(st.st_mode))
    return chakra_error_set(err, CHAKRA_EINVAL, "%s: is a directory, expected a file", path);
  if (exists && (!S_ISREG(st.st_mode) || is_std_stream(&st))) return 0; /* written in place */
  for (size_t i = 0; exists && i < n; i++) {
    struct stat in;
    if (inputs[i] && strcmp(inputs[i], "-") != 0 && stat(inputs[i], &in) == 0 &&
        in.st_dev == st.st_dev && in.st_ino == st.st_ino)
      return chakra_error_set(err, CHAKRA_EINVAL,
                              "%s: is the same file as the input %s; writing it would destroy the input",
                              path, inputs[i]);
  }
  char *target = final_target(path);
  if (!target) return chakra_error_set(err, CHAKRA_EIO, "%s: cannot resolve the symbolic link (a loop?)", path);
  char dir[PATH_MAX];
  folder_of(target, dir);
  free(target);
  struct stat ds;
  if (stat(dir, &ds) != 0 || !S_ISDIR(ds.st_mode))
    return chakra_error_set(err, CHAKRA_EIO, "%s: folder %s does not exist", path, dir);
  if (access(dir, W_OK | X_OK) != 0)
    return chakra_error_set(err, CHAKRA_EIO, "%s: folder %s is not writable: %s", path, dir, strerror(errno));
  return 0;
}
