//! The library's pages and operations (seed 001, Tables 1–3), under
//! `/library`:
//!
//! | page | what |
//! |---|---|
//! | `GET /library` | the root VL's summary |
//! | `GET /library/{vl}` | a VL's summary: postings alphabetically with their numbers, sub-VLs in bold after an asterisk, each pointer's last check |
//! | `GET /library/{vl}/all` | everything at and below it, most recent first |
//! | `GET /library/{vl}/change` | Add, Change or Delete: the Point, Pointers, Input, Create and Delete forms |
//! | `POST /library/{vl}/{point,pointers,input,create,delete}` | those operations |
//! | `GET`/`POST /library/posting/{id}/edit` | Edit (a version check tells a second editor) |
//! | `GET`/`POST /library/posting/{id}/{move,copy}` | Move and Copy to any VL |
//! | `POST /library/posting/{id}/follow` | point a moved pointer at its new URL |
//! | `GET /library/report/{id}` | a report's text |
//! | `GET /library/posting/{id}` | leads to the posting's line in its VL, on the summary's page that shows it |
//! | `GET`/`POST /library/login`, `POST /library/logout` | moderators |
//!
//! Every form carries a CSRF token tied to the client's cookie
//! (`HttpOnly`, `SameSite=Strict`); a successful post answers with a
//! redirect to the summary it changed, at the posting's line (no
//! resubmission on reload). A form that changes a posting names the
//! posting and version it was opened for, and is refused when either has
//! changed.

use super::auth::Refusal;
use super::input::{self, Invalid};
use super::request::{
    Form, Library, MAX_FORM, SESSION_COOKIE, Visitor, done, failed, forged, may_change, may_remove,
    message, new_password, page, read_page, refusal, refused, retry_after, set_cookie, with_store,
};
use askama::Template;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path as UrlPath, State};
use axum::http::{StatusCode, header};
use axum::response::Response;
use axum::routing::{get, post};
use spinneret_store::{LibraryError, Opened, PointerCheck, Posting, PostingKind, Store};
use std::sync::Arc;

/// The most postings the global list shows.
const GLOBAL_LIST: usize = 1000;

/// The library's routes, to nest under `/library`.
pub fn router<S: Clone + Send + Sync + 'static>(lib: Arc<Library>) -> Router<S> {
    Router::new()
        .route("/", get(root))
        .route("/login", get(login_page).post(log_in))
        .route("/logout", post(log_out))
        .route("/report/{id}", get(report))
        .route("/posting/{id}", get(posting))
        .route("/posting/{id}/edit", get(edit_page).post(edit))
        .route("/posting/{id}/{op}", get(place_page).post(place))
        .route("/posting/{id}/follow", post(follow))
        .route("/{vl}", get(summary))
        .route("/{vl}/all", get(global_list))
        .route("/{vl}/change", get(change_page))
        .route("/{vl}/{op}", post(operate))
        .layer(axum::extract::DefaultBodyLimit::max(MAX_FORM))
        .with_state(lib)
}

pub(crate) fn date(t: i64) -> String {
    jiff::Timestamp::from_second(t)
        .map(|t| t.strftime("%Y-%m-%d").to_string())
        .unwrap_or_default()
}

fn link(p: &Posting) -> String {
    match p.kind {
        PostingKind::Vl => format!("/library/{}", p.id),
        PostingKind::Report => format!("/library/report/{}", p.id),
        PostingKind::Pointer => p.text.url.clone().unwrap_or_default(),
    }
}

/// A posting as the pages show it.
struct Shown {
    id: i64,
    seq: i64,
    kind: &'static str,
    is_vl: bool,
    title: String,
    href: String,
    url: Option<String>,
    author: Option<String>,
    locked: bool,
    /// Its version and creation stamp, which its forms name.
    version: i64,
    created_at: i64,
    changed: String,
    check: Option<CheckShown>,
    /// Where it is (the global list).
    place: Option<(String, String)>,
}

/// What the spider last found at a pointer's URL.
struct CheckShown {
    /// One word, for the page's style: fine, moved, broken, blocked, unchecked.
    class: &'static str,
    state: &'static str,
    moved_to: Option<String>,
    detail: Option<String>,
    date: String,
}

fn shown(p: &Posting, check: Option<&PointerCheck>) -> Shown {
    Shown {
        id: p.id,
        seq: p.seq,
        kind: p.kind.as_str(),
        is_vl: p.kind == PostingKind::Vl,
        title: p.text.title.clone(),
        href: link(p),
        url: p.text.url.clone(),
        author: p.text.author.clone(),
        locked: p.password.is_some(),
        version: p.version,
        created_at: p.created_at,
        changed: date(p.updated_at),
        check: check.map(|c| CheckShown {
            class: match c.category.as_str() {
                "ok" => "fine",
                "moved" => "moved",
                "broken" => "broken",
                "blocked" => "blocked",
                _ => "unchecked",
            },
            state: match c.category.as_str() {
                "ok" => "fine",
                "moved" => "moved",
                "broken" => "broken",
                "blocked" => "refused to the spider",
                "avoided" => "not checked (robots.txt or an avoid rule)",
                _ => "not checked",
            },
            moved_to: c.moved_to.clone().filter(|_| c.category == "moved"),
            detail: c
                .detail
                .clone()
                .filter(|_| matches!(c.category.as_str(), "broken" | "blocked")),
            date: date(c.checked_at),
        }),
        place: None,
    }
}

/// The VL `id` with its ancestors and its image (its own, else the
/// nearest ancestor's), or why not.
pub(crate) fn vl_of(
    store: &Store,
    id: i64,
) -> Result<(Posting, Vec<Posting>, Option<String>), LibraryError> {
    let vl = store.library_posting(id)?;
    if vl.kind != PostingKind::Vl {
        return Err(LibraryError::NotAVl(id));
    }
    let up = store.library_ancestors(id)?;
    let image = vl
        .text
        .image
        .clone()
        .or_else(|| up.iter().rev().find_map(|a| a.text.image.clone()));
    Ok((vl, up, image))
}

#[derive(Template)]
#[template(path = "library/vl.html")]
struct VlPage {
    version: &'static str,
    id: i64,
    title: String,
    image: Option<String>,
    purpose: Option<String>,
    create_only: bool,
    parent: Option<(i64, String)>,
    root: Option<(i64, String)>,
    postings: Vec<Shown>,
    /// Postings in the VL in all (the page shows `first` to `last`).
    total: usize,
    first: usize,
    last: usize,
    /// Where the previous and next pages start, when there are more.
    previous: Option<usize>,
    next: Option<usize>,
    moderator: Option<String>,
    csrf: String,
}

/// Postings on one page of a VL's summary.
const SUMMARY_PAGE: usize = 500;

/// The `from=N` of a summary page's query (0 when absent or not a number).
fn from_of(query: Option<&str>) -> usize {
    url::form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .find(|(k, _)| k == "from")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0)
}

/// Where posting `id`, posted in VL `vl`, is shown when `position`
/// postings come before it there: its line on the page of the VL's
/// summary that holds it.
fn spot(vl: i64, id: i64, position: usize) -> String {
    match position - position % SUMMARY_PAGE {
        0 => format!("/library/{vl}#p{id}"),
        from => format!("/library/{vl}?from={from}#p{id}"),
    }
}

/// Where posting `p` is shown: a sub-VL or an entry at its line in its VL
/// ([`spot`]), the root as itself.
async fn place_of(lib: &Arc<Library>, p: &Posting) -> String {
    let Some(vl) = p.parent else {
        return format!("/library/{}", p.id);
    };
    let id = p.id;
    match with_store(lib, move |s, _| s.library_position(id)).await {
        Ok(position) => spot(vl, id, position),
        Err(_) => format!("/library/{vl}#p{id}"),
    }
}

/// `/library/posting/{id}`: the posting at its line in its VL, on the
/// page that shows it (what a search result links to; it stays right
/// when postings are added before it).
async fn posting(
    State(lib): State<Arc<Library>>,
    v: Visitor,
    UrlPath(id): UrlPath<i64>,
) -> Response {
    match with_store(&lib, move |s, _| s.library_posting(id)).await {
        Ok(p) => done(&place_of(&lib, &p).await),
        Err(e) => refused(&v, e, "/library"),
    }
}

async fn root(State(lib): State<Arc<Library>>) -> Response {
    match with_store(&lib, |s, title| s.library_root(title)).await {
        Ok(root) => done(&format!("/library/{}", root.id)),
        Err(e) => failed(&anyhow::Error::from(e)),
    }
}

async fn summary(
    State(lib): State<Arc<Library>>,
    v: Visitor,
    UrlPath(id): UrlPath<i64>,
    axum::extract::RawQuery(query): axum::extract::RawQuery,
) -> Response {
    let from = from_of(query.as_deref());
    let answer = with_store(&lib, move |s, _| {
        let (vl, up, image) = vl_of(s, id)?;
        let total = s.library_count(id)?;
        // A page starts at a multiple of the page size; one past the end
        // shows the last.
        let from = from.min(total.saturating_sub(1));
        let from = from - from % SUMMARY_PAGE;
        let postings = s.library_postings_page(id, from, SUMMARY_PAGE)?;
        Ok((vl, up, image, postings, total, from))
    })
    .await;
    read_page(
        &v,
        answer.map(|(vl, up, image, postings, total, from)| VlPage {
            version: env!("CARGO_PKG_VERSION"),
            id,
            title: vl.text.title.clone(),
            image,
            purpose: vl.text.body.clone(),
            create_only: vl.text.create_only,
            parent: up.last().map(|p| (p.id, p.text.title.clone())),
            root: up.first().map(|p| (p.id, p.text.title.clone())),
            first: from + 1,
            last: from + postings.len(),
            previous: from.checked_sub(SUMMARY_PAGE),
            next: Some(from + SUMMARY_PAGE).filter(|n| *n < total),
            total,
            postings: postings.iter().map(|(p, c)| shown(p, c.as_ref())).collect(),
            moderator: v.moderator.clone(),
            csrf: lib.token(&v),
        }),
    )
}

#[derive(Template)]
#[template(path = "library/list.html")]
struct ListPage {
    version: &'static str,
    id: i64,
    title: String,
    postings: Vec<Shown>,
    limit: usize,
}

async fn global_list(
    State(lib): State<Arc<Library>>,
    v: Visitor,
    UrlPath(id): UrlPath<i64>,
) -> Response {
    let answer = with_store(&lib, move |s, _| {
        let (vl, _, _) = vl_of(s, id)?;
        let list = s.library_global_list(id, GLOBAL_LIST)?;
        let mut out = Vec::with_capacity(list.len());
        let mut titles = std::collections::HashMap::new();
        for p in list {
            let mut row = shown(&p, None);
            if let Some(parent) = p.parent {
                let t = match titles.get(&parent) {
                    Some(t) => t,
                    None => {
                        let t = s.library_posting(parent)?.text.title;
                        titles.entry(parent).or_insert(t)
                    }
                };
                row.place = Some((format!("/library/{parent}"), t.clone()));
            }
            out.push(row);
        }
        Ok((vl, out))
    })
    .await;
    read_page(
        &v,
        answer.map(|(vl, postings)| ListPage {
            version: env!("CARGO_PKG_VERSION"),
            id,
            title: vl.text.title,
            postings,
            limit: GLOBAL_LIST,
        }),
    )
}

#[derive(Template)]
#[template(path = "library/report.html")]
struct ReportPage {
    version: &'static str,
    title: String,
    url: Option<String>,
    image: Option<String>,
    body: Option<String>,
    author: Option<String>,
    changed: String,
    vl: (i64, String),
}

async fn report(
    State(lib): State<Arc<Library>>,
    v: Visitor,
    UrlPath(id): UrlPath<i64>,
) -> Response {
    let answer = with_store(&lib, move |s, _| {
        let p = s.library_posting(id)?;
        if p.kind != PostingKind::Report {
            return Err(LibraryError::NotFound(id));
        }
        // Its own image, else its VL's (the seed's default, as the
        // published page has it).
        let (vl, _, image) = vl_of(s, p.parent.unwrap_or_default())?;
        Ok((p, vl, image))
    })
    .await;
    read_page(
        &v,
        answer.map(|(p, vl, image)| ReportPage {
            version: env!("CARGO_PKG_VERSION"),
            title: p.text.title,
            url: p.text.url,
            image: p.text.image.or(image),
            // Sanitised when posted; sanitised again as shown, so a
            // store written by another program cannot slip a script in.
            body: p.text.body.as_deref().map(input::sanitise),
            author: p.text.author,
            changed: date(p.updated_at),
            vl: (vl.id, vl.text.title),
        }),
    )
}

#[derive(Template)]
#[template(path = "library/change.html")]
struct ChangePage {
    version: &'static str,
    id: i64,
    title: String,
    create_only: bool,
    postings: Vec<Shown>,
    csrf: String,
    moderator: Option<String>,
    /// The operation refused, with why.
    error: Option<(String, String)>,
    /// What was typed in its form.
    typed: Form,
}

impl ChangePage {
    /// Whether the refused operation is `op`.
    fn is_op(&self, op: &str) -> bool {
        self.error.as_ref().is_some_and(|(o, _)| o == op)
    }

    /// What was typed in `field` of `op`'s form, when `op` was refused.
    fn v(&self, op: &str, field: &str) -> &str {
        if !self.is_op(op) {
            return "";
        }
        self.typed.get(field)
    }

    /// The operation's name, as the page heads its form.
    fn op_name(&self, op: &str) -> &'static str {
        match op {
            "point" => "Point",
            "pointers" => "Pointers",
            "input" => "Input",
            "create" => "Create",
            _ => "Delete",
        }
    }
}

async fn change_page(
    State(lib): State<Arc<Library>>,
    v: Visitor,
    UrlPath(id): UrlPath<i64>,
) -> Response {
    change_form(&lib, &v, id, StatusCode::OK, None, Form::default()).await
}

async fn change_form(
    lib: &Arc<Library>,
    v: &Visitor,
    id: i64,
    status: StatusCode,
    error: Option<(String, String)>,
    typed: Form,
) -> Response {
    let answer = with_store(lib, move |s, _| {
        let (vl, _, _) = vl_of(s, id)?;
        Ok((vl, s.library_postings(id)?))
    })
    .await;
    match answer {
        Ok((vl, postings)) => page(
            v,
            status,
            &ChangePage {
                version: env!("CARGO_PKG_VERSION"),
                id,
                title: vl.text.title,
                create_only: vl.text.create_only,
                postings: postings.iter().map(|(p, c)| shown(p, c.as_ref())).collect(),
                csrf: lib.token(v),
                moderator: v.moderator.clone(),
                error,
                typed,
            },
        ),
        Err(e) => refused(v, e, "/library"),
    }
}

/// The operations on a VL: Point, Pointers, Input, Create, Delete.
async fn operate(
    State(lib): State<Arc<Library>>,
    v: Visitor,
    UrlPath((id, op)): UrlPath<(i64, String)>,
    body: Bytes,
) -> Response {
    let f = Form::parse(&body);
    let back = format!("/library/{id}/change");
    if let Some(r) = forged(&lib, &v, &f, &back) {
        return r;
    }
    let again = |op: &str, e: String| {
        let typed = f.clone();
        let lib = lib.clone();
        let op = op.to_string();
        let v = &v;
        async move {
            change_form(
                &lib,
                v,
                id,
                StatusCode::UNPROCESSABLE_ENTITY,
                Some((op, e)),
                typed,
            )
            .await
        }
    };
    let kind = match op.as_str() {
        "point" => PostingKind::Pointer,
        "input" => PostingKind::Report,
        "create" => PostingKind::Vl,
        "pointers" => PostingKind::Pointer,
        "delete" => return delete(&lib, &v, id, &f).await,
        _ => {
            return message(
                &v,
                StatusCode::NOT_FOUND,
                "Not found",
                "There is no such operation.",
                &back,
            );
        }
    };
    if let Err(r) = may_post(&lib, &v) {
        let answer = change_form(
            &lib,
            &v,
            id,
            r.status(),
            Some((op.clone(), r.to_string())),
            f.clone(),
        )
        .await;
        return retry_after(answer, &r);
    }
    // Pointers: every line a pointer, with the form's author and e-mail
    // address; the others: the form's one posting.
    let texts = if op == "pointers" {
        input::pointers(f.get("list")).and_then(|list| {
            let author = input::optional_line("author", f.get("author"))?;
            let email = input::optional_email(f.get("email"))?;
            Ok(list
                .into_iter()
                .map(|(url, title)| spinneret_store::PostingText {
                    title,
                    url: Some(url),
                    author: author.clone(),
                    email: email.clone(),
                    ..spinneret_store::PostingText::default()
                })
                .collect::<Vec<_>>())
        })
    } else {
        f.fields().text(kind).map(|t| vec![t])
    };
    // What the spider will request may not be on the server's network.
    let texts = texts.and_then(|texts| {
        for t in &texts {
            if let Some(u) = &t.url {
                lib.reachable(u)?;
            }
        }
        Ok(texts)
    });
    let texts = match texts {
        Ok(t) => t,
        Err(Invalid(e)) => return again(&op, e).await,
    };
    let password = match new_password(f.get("password")).await {
        Ok(p) => p,
        Err(e) => return failed(&e),
    };
    let postings: Vec<_> = texts
        .into_iter()
        .map(|t| (kind, t, password.clone()))
        .collect();
    match with_store(&lib, move |s, _| s.library_post(id, &postings)).await {
        // One posting: shown at its line, on whichever page of the
        // summary holds it.
        Ok(posted) if posted.len() == 1 => done(&place_of(&lib, &posted[0]).await),
        Ok(_) => done(&format!("/library/{id}")),
        Err(LibraryError::Store(e)) => failed(&e.into()),
        Err(e) => again(&op, e.to_string()).await,
    }
}

/// Whether visitor `v` may post now: a moderator always; anyone else
/// [`super::auth::MAX_POSTS`] times within
/// [`super::auth::POST_WINDOW`] (counted here).
fn may_post(lib: &Library, v: &Visitor) -> Result<(), Refusal> {
    if v.moderator.is_some() {
        return Ok(());
    }
    lib.guard.post(&v.peer)
}

/// Delete: the postings ticked, each with its password (or by a
/// moderator); all of them, or none when one is refused.
async fn delete(lib: &Arc<Library>, v: &Visitor, vl: i64, f: &Form) -> Response {
    let ids: Vec<i64> = f.all("posting").filter_map(|s| s.parse().ok()).collect();
    let again = |e: String| {
        change_form(
            lib,
            v,
            vl,
            StatusCode::UNPROCESSABLE_ENTITY,
            Some(("delete".into(), e)),
            Form::default(),
        )
    };
    if ids.is_empty() {
        return again("tick the postings to delete".into()).await;
    }
    let wanted = ids.clone();
    let postings = match with_store(lib, move |s, _| {
        wanted
            .iter()
            .map(|&i| s.library_posting(i))
            .collect::<Result<Vec<_>, _>>()
    })
    .await
    {
        Ok(p) => p,
        Err(e) => return refused(v, e, &format!("/library/{vl}/change")),
    };
    for p in &postings {
        if p.parent != Some(vl) {
            return again(format!("\"{}\" is not in this library", p.text.title)).await;
        }
        if let Err(r) = may_remove(lib, v, p, f.get("password")).await {
            // Refused as Edit and Move refuse: 403, or 429 while guessing
            // is cut off (before, 422 for both).
            let error = format!("\"{}\" was not deleted: {r}", p.text.title);
            let answer = change_form(
                lib,
                v,
                vl,
                r.status(),
                Some(("delete".into(), error)),
                Form::default(),
            )
            .await;
            return retry_after(answer, &r);
        }
    }
    match with_store(lib, move |s, _| s.library_delete(&ids)).await {
        Ok(_) => done(&format!("/library/{vl}")),
        Err(e) => refused(v, e, &format!("/library/{vl}/change")),
    }
}

#[derive(Template)]
#[template(path = "library/edit.html")]
struct EditPage {
    version: &'static str,
    id: i64,
    is_vl: bool,
    is_pointer: bool,
    locked: bool,
    /// The version the form was opened at.
    read: i64,
    /// Which posting it was opened for: its creation stamp.
    opened: i64,
    vl: (i64, String),
    csrf: String,
    moderator: Option<String>,
    error: Option<String>,
    values: input::Fields,
}

async fn edit_page(
    State(lib): State<Arc<Library>>,
    v: Visitor,
    UrlPath(id): UrlPath<i64>,
) -> Response {
    edit_form(&lib, &v, id, StatusCode::OK, None, None).await
}

async fn edit_form(
    lib: &Arc<Library>,
    v: &Visitor,
    id: i64,
    status: StatusCode,
    error: Option<String>,
    typed: Option<(input::Fields, Opened)>,
) -> Response {
    let answer = with_store(lib, move |s, _| {
        let p = s.library_posting(id)?;
        let vl = match p.parent {
            Some(parent) => s.library_posting(parent)?,
            None => p.clone(),
        };
        Ok((p, vl))
    })
    .await;
    match answer {
        Ok((p, vl)) => {
            let (values, opened) =
                typed.unwrap_or_else(|| (input::Fields::from(&p.text), p.opened()));
            page(
                v,
                status,
                &EditPage {
                    version: env!("CARGO_PKG_VERSION"),
                    id,
                    is_vl: p.kind == PostingKind::Vl,
                    is_pointer: p.kind == PostingKind::Pointer,
                    locked: p.password.is_some(),
                    read: opened.version,
                    opened: opened.created_at,
                    vl: (vl.id, vl.text.title),
                    csrf: lib.token(v),
                    moderator: v.moderator.clone(),
                    error,
                    values,
                },
            )
        }
        Err(e) => refused(v, e, "/library"),
    }
}

async fn edit(
    State(lib): State<Arc<Library>>,
    v: Visitor,
    UrlPath(id): UrlPath<i64>,
    body: Bytes,
) -> Response {
    let f = Form::parse(&body);
    let back = format!("/library/posting/{id}/edit");
    if let Some(r) = forged(&lib, &v, &f, &back) {
        return r;
    }
    let Some(opened) = opened_of(&f) else {
        return message(
            &v,
            StatusCode::UNPROCESSABLE_ENTITY,
            "Not saved",
            "This form does not say which posting and version it was opened for; open the posting's edit page again and make your change there.",
            &back,
        );
    };
    let again =
        |status, e: String| edit_form(&lib, &v, id, status, Some(e), Some((f.fields(), opened)));
    // The posting the form was opened for, or nothing: never another
    // that has its number now.
    let p = match with_store(&lib, move |s, _| s.library_posting(id)).await {
        Ok(p) if p.created_at == opened.created_at => p,
        Ok(_) | Err(LibraryError::NotFound(_)) => {
            return refused(&v, LibraryError::Gone(id), "/library");
        }
        Err(e) => return refused(&v, e, "/library"),
    };
    let text = f.fields().text(p.kind).and_then(|t| match &t.url {
        Some(u) => lib.reachable(u).map(|()| t),
        None => Ok(t),
    });
    let text = match text {
        Ok(t) => t,
        Err(Invalid(e)) => return again(StatusCode::UNPROCESSABLE_ENTITY, e).await,
    };
    if let Err(r) = may_change(&lib, &v, &p, f.get("password")).await {
        return retry_after(again(r.status(), format!("not saved: {r}")).await, &r);
    }
    let password = if !f.get("remove_password").is_empty() {
        Some(None)
    } else {
        match new_password(f.get("new_password")).await {
            Ok(Some(h)) => Some(Some(h)),
            Ok(None) => None,
            Err(e) => return failed(&e),
        }
    };
    match with_store(&lib, move |s, _| {
        s.library_edit(id, opened, &text, password)
    })
    .await
    {
        Ok(p) if p.kind == PostingKind::Vl => done(&format!("/library/{}", p.id)),
        Ok(p) => done(&place_of(&lib, &p).await),
        Err(e @ LibraryError::Conflict { .. }) => again(StatusCode::CONFLICT, e.to_string()).await,
        Err(e) => refused(&v, e, &back),
    }
}

/// What a form names as what it was opened at: the posting's creation
/// stamp (`opened`) and version (`read`); none when it does not say.
fn opened_of(f: &Form) -> Option<Opened> {
    Some(Opened {
        created_at: f.get("opened").parse().ok()?,
        version: f.get("read").parse().ok()?,
    })
}

#[derive(Template)]
#[template(path = "library/place.html")]
struct PlacePage {
    version: &'static str,
    id: i64,
    op: &'static str,
    title: String,
    locked: bool,
    /// Every VL, indented by depth: (id, depth, title).
    vls: Vec<(i64, usize, String)>,
    csrf: String,
    moderator: Option<String>,
    error: Option<String>,
}

impl PlacePage {
    /// The indent of a library `depth` levels below the root.
    fn indent(&self, depth: &usize) -> String {
        "\u{2014} ".repeat(*depth)
    }
}

async fn place_form(
    lib: &Arc<Library>,
    v: &Visitor,
    id: i64,
    op: &'static str,
    status: StatusCode,
    error: Option<String>,
) -> Response {
    let answer = with_store(lib, move |s, _| {
        let p = s.library_posting(id)?;
        Ok((p, s.library_vls()?))
    })
    .await;
    match answer {
        Ok((p, vls)) => page(
            v,
            status,
            &PlacePage {
                version: env!("CARGO_PKG_VERSION"),
                id,
                op,
                title: p.text.title,
                locked: p.password.is_some(),
                vls,
                csrf: lib.token(v),
                moderator: v.moderator.clone(),
                error,
            },
        ),
        Err(e) => refused(v, e, "/library"),
    }
}

/// Move or Copy, as the path says (none for any other word).
fn place_op(op: &str) -> Option<&'static str> {
    match op {
        "move" => Some("move"),
        "copy" => Some("copy"),
        _ => None,
    }
}

async fn place_page(
    State(lib): State<Arc<Library>>,
    v: Visitor,
    UrlPath((id, op)): UrlPath<(i64, String)>,
) -> Response {
    match place_op(&op) {
        Some(op) => place_form(&lib, &v, id, op, StatusCode::OK, None).await,
        None => message(
            &v,
            StatusCode::NOT_FOUND,
            "Not found",
            "There is no such operation.",
            "/library",
        ),
    }
}

/// Move (with the posting's password) or copy (anyone) posting `id` into
/// the VL the form names.
async fn place(
    State(lib): State<Arc<Library>>,
    v: Visitor,
    UrlPath((id, op)): UrlPath<(i64, String)>,
    body: Bytes,
) -> Response {
    let Some(op) = place_op(&op) else {
        return message(
            &v,
            StatusCode::NOT_FOUND,
            "Not found",
            "There is no such operation.",
            "/library",
        );
    };
    let f = Form::parse(&body);
    let back = format!("/library/posting/{id}/{op}");
    if let Some(r) = forged(&lib, &v, &f, &back) {
        return r;
    }
    let Ok(to) = f.get("to").parse::<i64>() else {
        return place_form(
            &lib,
            &v,
            id,
            op,
            StatusCode::UNPROCESSABLE_ENTITY,
            Some("choose the library to put it in".into()),
        )
        .await;
    };
    let p = match with_store(&lib, move |s, _| s.library_posting(id)).await {
        Ok(p) => p,
        Err(e) => return refused(&v, e, "/library"),
    };
    let allowed = match op {
        "move" => may_remove(&lib, &v, &p, f.get("password")).await,
        // A copy adds postings: counted as a post.
        _ => may_post(&lib, &v),
    };
    if let Err(r) = allowed {
        let error = match op {
            "move" => format!("not moved: {r}"),
            _ => format!("not copied: {r}"),
        };
        let answer = place_form(&lib, &v, id, op, r.status(), Some(error)).await;
        return retry_after(answer, &r);
    }
    let answer = with_store(&lib, move |s, _| match op {
        "move" => s.library_move(id, to),
        _ => s.library_copy(id, to),
    })
    .await;
    match answer {
        Ok(p) => done(&place_of(&lib, &p).await),
        Err(LibraryError::Store(e)) => failed(&e.into()),
        Err(e) => {
            place_form(
                &lib,
                &v,
                id,
                op,
                StatusCode::UNPROCESSABLE_ENTITY,
                Some(e.to_string()),
            )
            .await
        }
    }
}

/// One click for a pointer the spider found moved: its URL becomes the
/// new one the spider found (its password, or a moderator), when it is
/// still the posting and the version the summary showed.
async fn follow(
    State(lib): State<Arc<Library>>,
    v: Visitor,
    UrlPath(id): UrlPath<i64>,
    body: Bytes,
) -> Response {
    let f = Form::parse(&body);
    if let Some(r) = forged(&lib, &v, &f, "/library") {
        return r;
    }
    let Some(opened) = opened_of(&f) else {
        return message(
            &v,
            StatusCode::UNPROCESSABLE_ENTITY,
            "Not done",
            "This form does not say which posting and version it was opened for; open the library's page again and use its button.",
            "/library",
        );
    };
    let (p, check) = match with_store(&lib, move |s, _| s.library_checked(id)).await {
        Ok((p, check)) if p.created_at == opened.created_at => (p, check),
        Ok(_) | Err(LibraryError::NotFound(_)) => {
            return refused(&v, LibraryError::Gone(id), "/library");
        }
        Err(e) => return refused(&v, e, "/library"),
    };
    let back = format!("/library/{}", p.parent.unwrap_or(p.id));
    if p.version != opened.version {
        let e = LibraryError::Conflict {
            current: p.version,
            read: opened.version,
        };
        return refused(&v, e, &back);
    }
    // Only where the spider found it moved: any other address is an
    // edit's, with its form.
    let found = check
        .filter(|c| c.category == "moved")
        .and_then(|c| c.moved_to)
        .and_then(|m| input::url("new URL", &m).ok());
    let to = match input::url("new URL", f.get("to")) {
        Ok(u) if Some(&u) == found.as_ref() => u,
        Ok(_) | Err(_) => {
            let e = match &found {
                Some(m) => format!(
                    "the spider last found this pointer moved to {m}, not to the address this form gives; open the page again and use its button, or edit the pointer to give another address"
                ),
                None => "the spider has not found this pointer moved; edit it to give it another address".to_string(),
            };
            return message(&v, StatusCode::UNPROCESSABLE_ENTITY, "Not done", &e, &back);
        }
    };
    if let Err(Invalid(e)) = lib.reachable(&to) {
        return message(&v, StatusCode::UNPROCESSABLE_ENTITY, "Not done", &e, &back);
    }
    if let Err(r) = may_change(&lib, &v, &p, f.get("password")).await {
        return refusal(&v, &r, &format!("not updated: {r}"), &back);
    }
    match with_store(&lib, move |s, _| s.library_set_url(id, opened, &to)).await {
        Ok(p) => done(&place_of(&lib, &p).await),
        Err(e) => refused(&v, e, &back),
    }
}

#[derive(Template)]
#[template(path = "library/login.html")]
struct LoginPage {
    version: &'static str,
    csrf: String,
    moderator: Option<String>,
    configured: bool,
    error: Option<String>,
}

async fn login_page(State(lib): State<Arc<Library>>, v: Visitor) -> Response {
    login_form(&lib, &v, StatusCode::OK, None)
}

fn login_form(lib: &Library, v: &Visitor, status: StatusCode, error: Option<String>) -> Response {
    page(
        v,
        status,
        &LoginPage {
            version: env!("CARGO_PKG_VERSION"),
            csrf: lib.token(v),
            moderator: v.moderator.clone(),
            configured: lib.guard.has_moderators(),
            error,
        },
    )
}

async fn log_in(State(lib): State<Arc<Library>>, v: Visitor, body: Bytes) -> Response {
    let f = Form::parse(&body);
    if let Some(r) = forged(&lib, &v, &f, "/library/login") {
        return r;
    }
    let (name, password) = (f.get("name").to_string(), f.get("password").to_string());
    let l = lib.clone();
    let peer = v.peer.clone();
    let answer = tokio::task::spawn_blocking(move || l.guard.log_in(&peer, &name, &password))
        .await
        .unwrap_or(Err(Refusal::Wrong));
    match answer {
        Ok(session) => {
            let mut r = done("/library");
            r.headers_mut().append(
                header::SET_COOKIE,
                set_cookie(&v, SESSION_COOKIE, &session, Some(12 * 60 * 60)),
            );
            r
        }
        Err(Refusal::Wrong) => login_form(
            &lib,
            &v,
            StatusCode::FORBIDDEN,
            Some("the name or the password is wrong".into()),
        ),
        Err(r) => retry_after(login_form(&lib, &v, r.status(), Some(r.to_string())), &r),
    }
}

async fn log_out(State(lib): State<Arc<Library>>, v: Visitor, body: Bytes) -> Response {
    let f = Form::parse(&body);
    if let Some(r) = forged(&lib, &v, &f, "/library") {
        return r;
    }
    if let Some(s) = &v.session {
        lib.guard.log_out(s);
    }
    let mut r = done("/library");
    r.headers_mut().append(
        header::SET_COOKIE,
        set_cookie(&v, SESSION_COOKIE, "0", Some(0)),
    );
    r
}
