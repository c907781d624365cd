;;; check.el --- headless check of ddplint lsp with eglot -*- lexical-binding: t -*-
;; Loads the docs/editors.md snippet ($DDPLINT_SNIPPET), opens $DDPLINT_FILE, starts eglot the way
;; M-x eglot does, waits for the DDP001 Flymake diagnostic, applies its quick fix and waits for
;; it to go.  Run: emacs --batch -l editors/emacs/check.el  (not -Q: Debian's elpa-eglot is
;; found through site-start).
(require 'eglot)
(require 'flymake)
(load (getenv "DDPLINT_SNIPPET") nil t)

(defun ddplint-check--say (format-string &rest args)
  (princ (concat (apply #'format format-string args) "\n")))

(defun ddplint-check--ddp001 ()
  (seq-find (lambda (d) (string-match-p "DDP001" (flymake-diagnostic-text d)))
            (flymake-diagnostics)))

(defun ddplint-check--wait (predicate seconds)
  (let ((deadline (+ (float-time) seconds)))
    (while (and (not (funcall predicate)) (< (float-time) deadline))
      (accept-process-output nil 0.2))
    (funcall predicate)))

(defun ddplint-check--fail (why)
  (ddplint-check--say "FAIL: %s" why)
  (kill-emacs 1))

(ddplint-check--say "Emacs %s, eglot from %s" emacs-version (locate-library "eglot"))
(find-file (getenv "DDPLINT_FILE"))
(python-mode)
(apply #'eglot (eglot--guess-contact))
(unless (ddplint-check--wait #'ddplint-check--ddp001 60)
  (ddplint-check--fail "no DDP001 diagnostic within 60 s"))
(let ((diagnostic (ddplint-check--ddp001)))
  (ddplint-check--say "diagnostic: %s (%s) on line %d" (flymake-diagnostic-text diagnostic)
                      (flymake-diagnostic-type diagnostic)
                      (line-number-at-pos (flymake-diagnostic-beg diagnostic)))
  (let* ((actions (jsonrpc-request
                   (eglot-current-server) :textDocument/codeAction
                   (list :textDocument (eglot--TextDocumentIdentifier)
                         :range (list :start (eglot--pos-to-lsp-position (flymake-diagnostic-beg diagnostic))
                                      :end (eglot--pos-to-lsp-position (flymake-diagnostic-end diagnostic)))
                         :context (list :diagnostics []))))
         (fix (seq-find (lambda (a) (string-prefix-p "DDP001:" (plist-get a :title))) actions)))
    (unless fix (ddplint-check--fail "no quick fix offered"))
    (ddplint-check--say "quick fix: %s" (plist-get fix :title))
    (eglot--apply-workspace-edit (plist-get fix :edit))
    ;; eglot sends the change from an idle timer, and a batch Emacs is never idle.
    (eglot--signal-textDocument/didChange)))
(unless (ddplint-check--wait (lambda () (null (ddplint-check--ddp001))) 60)
  (ddplint-check--fail "DDP001 stayed after the fix"))
(goto-char (point-min))
(search-forward "loader = DataLoader(")
(ddplint-check--say "fixed line: %s" (string-trim (thing-at-point 'line t)))
(ddplint-check--say "PASS")
(kill-emacs 0)
