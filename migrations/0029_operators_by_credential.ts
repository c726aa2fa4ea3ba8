import { sql, type Kysely } from 'kysely'

// The same group role as 0009: it gets the rows it uses and no more.
const SERVICE_ROLE = 'animal_store_app'

/**
 * The service's role cannot mint, revive or revoke an operator, nor append an event in an admin's
 * name, with its password alone. It loses INSERT, UPDATE and DELETE on operators; an operator is made
 * and revoked by create_operator and revoke_operator, which append their own audit event and need an
 * admin's credential: the SHA-256 of the token the request presented, an unrevoked admin operator's
 * or a registered ADMIN_TOKEN's (admin_credentials, which only the owner writes). append_audit_event
 * takes the credential too: `bootstrap` needs a registered ADMIN_TOKEN's, `operator:NAME` that
 * operator's own token, unrevoked. A session of the schema's owner (or a superuser) needs none: it
 * could write the rows itself. Events are stamped with clock_timestamp(), the time of the append,
 * not of the transaction's start; a `key:` actor may name a key's previous prefix, the secret in a
 * rotation's grace that made the request.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE admin_credentials (
      token_hash bytea PRIMARY KEY CHECK (length(token_hash) = 32),
      registered_at timestamptz NOT NULL DEFAULT now()
    )
  `.execute(db)
  await sql`REVOKE INSERT, UPDATE, DELETE ON operators FROM ${sql.id(SERVICE_ROLE)}`.execute(db)

  // Whether the session's login role could write these rows itself: the owner of the tables, or a superuser.
  await sql`
    CREATE FUNCTION owner_session() RETURNS boolean
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
      SELECT pg_has_role(session_user, c.relowner, 'MEMBER') FROM pg_class c WHERE c.oid = 'public.operators'::regclass
    $$
  `.execute(db)
  // Who a credential is: 'bootstrap' (a registered ADMIN_TOKEN) or 'operator:NAME' (unrevoked), with its role.
  await sql`
    CREATE FUNCTION credential_holder(credential bytea, OUT actor text, OUT role text)
    LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
      SELECT 'bootstrap', 'admin' FROM public.admin_credentials a WHERE a.token_hash = credential
      UNION ALL
      SELECT 'operator:' || o.name, o.role FROM public.operators o
      WHERE o.token_hash = credential AND o.revoked_at IS NULL
      LIMIT 1
    $$
  `.execute(db)
  await sql`REVOKE ALL ON FUNCTION owner_session() FROM PUBLIC`.execute(db)
  await sql`REVOKE ALL ON FUNCTION credential_holder(bytea) FROM PUBLIC`.execute(db)

  await sql`DROP FUNCTION append_audit_event(text, text, bigint, bigint, jsonb, text, text)`.execute(db)
  await sql`
    CREATE FUNCTION append_audit_event(
      actor text, action text, account_id bigint, key_id bigint, changes jsonb, request_id text, on_behalf_of text,
      credential bytea
    ) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    DECLARE
      appended bigint;
    BEGIN
      IF actor IS NULL OR actor !~ '^(bootstrap|operator:[a-z0-9][a-z0-9._-]{0,62}|key:ask_[0-9A-Za-z]{8}|cli:.{1,251})$' THEN
        RAISE EXCEPTION 'audit actor of no known shape' USING ERRCODE = '22023';
      END IF;
      IF actor LIKE 'operator:%'
        AND NOT EXISTS (SELECT 1 FROM public.operators o WHERE o.name = substr(actor, 10)) THEN
        RAISE EXCEPTION 'audit actor names no operator' USING ERRCODE = '22023';
      END IF;
      -- A key's secret replaced by a rotation, still in its grace, acts under its own prefix.
      IF actor LIKE 'key:%' AND NOT EXISTS (
        SELECT 1 FROM public.api_keys k WHERE k.prefix = substr(actor, 5) OR k.previous_prefix = substr(actor, 5)
      ) THEN
        RAISE EXCEPTION 'audit actor names no key' USING ERRCODE = '22023';
      END IF;
      IF (actor = 'bootstrap' OR actor LIKE 'operator:%') AND NOT public.owner_session()
        AND (SELECT h.actor FROM public.credential_holder(credential) h) IS DISTINCT FROM actor THEN
        RAISE EXCEPTION 'audit actor % needs its own credential', actor USING ERRCODE = '42501';
      END IF;
      INSERT INTO public.audit_events (at, actor, action, account_id, key_id, changes, request_id, on_behalf_of)
      VALUES (clock_timestamp(), actor, action, account_id, key_id, coalesce(changes, '{}'), request_id, on_behalf_of)
      RETURNING id INTO appended;
      RETURN appended;
    END
    $$
  `.execute(db)

  // The maker: the admin whose credential this is, or, in an owner's session, the actor it names.
  await sql`
    CREATE FUNCTION operator_maker(credential bytea, actor text) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    DECLARE
      holder record;
    BEGIN
      SELECT * INTO holder FROM public.credential_holder(credential);
      IF holder.actor IS NOT NULL AND holder.role = 'admin' THEN
        RETURN holder.actor;
      END IF;
      IF public.owner_session() THEN
        RETURN actor;
      END IF;
      RAISE EXCEPTION 'operators are made and revoked only with an admin''s credential, or in a session of the schema''s owner' USING ERRCODE = '42501';
    END
    $$
  `.execute(db)
  await sql`REVOKE ALL ON FUNCTION operator_maker(bytea, text) FROM PUBLIC`.execute(db)

  await sql`
    CREATE FUNCTION create_operator(
      credential bytea, actor text, name text, role text, prefix text, token_hash bytea, request_id text,
      on_behalf_of text
    ) RETURNS TABLE (id bigint, created_at timestamptz)
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    DECLARE
      maker text := public.operator_maker(credential, actor);
    BEGIN
      INSERT INTO public.operators AS o (name, role, prefix, token_hash)
      VALUES (create_operator.name, create_operator.role, create_operator.prefix, create_operator.token_hash)
      RETURNING o.id, o.created_at INTO id, created_at;
      PERFORM public.append_audit_event(maker, 'operator.created', NULL, NULL, jsonb_build_object(
        'operator', jsonb_build_object('before', NULL, 'after', create_operator.name),
        'role', jsonb_build_object('before', NULL, 'after', create_operator.role),
        'prefix', jsonb_build_object('before', NULL, 'after', create_operator.prefix)
      ), request_id, on_behalf_of, credential);
      RETURN NEXT;
    END
    $$
  `.execute(db)

  // Revokes the operator and appends its event; one revoked already is returned as it is, with no event.
  await sql`
    CREATE FUNCTION revoke_operator(credential bytea, actor text, operator_id bigint, request_id text, on_behalf_of text)
    RETURNS TABLE (revoked_at timestamptz)
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    DECLARE
      maker text := public.operator_maker(credential, actor);
      target record;
    BEGIN
      SELECT o.name, o.revoked_at INTO target FROM public.operators o WHERE o.id = operator_id FOR UPDATE;
      IF NOT FOUND THEN
        RETURN;
      END IF;
      IF target.revoked_at IS NOT NULL THEN
        revoked_at := target.revoked_at;
        RETURN NEXT;
        RETURN;
      END IF;
      UPDATE public.operators o SET revoked_at = now() WHERE o.id = operator_id RETURNING o.revoked_at INTO revoked_at;
      PERFORM public.append_audit_event(maker, 'operator.revoked', NULL, NULL, jsonb_build_object(
        'operator', jsonb_build_object('before', target.name, 'after', target.name),
        'revokedAt', jsonb_build_object('before', NULL,
          'after', to_char(revoked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
      ), request_id, on_behalf_of, credential);
      RETURN NEXT;
    END
    $$
  `.execute(db)

  for (const signature of [
    'append_audit_event(text, text, bigint, bigint, jsonb, text, text, bytea)',
    'create_operator(bytea, text, text, text, text, bytea, text, text)',
    'revoke_operator(bytea, text, bigint, text, text)'
  ]) {
    await sql`REVOKE ALL ON FUNCTION ${sql.raw(signature)} FROM PUBLIC`.execute(db)
    await sql`GRANT EXECUTE ON FUNCTION ${sql.raw(signature)} TO ${sql.id(SERVICE_ROLE)}`.execute(db)
  }

  // The call without a credential, which the release before this one makes for every audited change
  // (a key rotated over /v1/keys, the CLI's changes), stays while it still serves: the same call with
  // no credential, which appends what a session without one may append and refuses the rest. It is
  // made in the transaction that drops it, since each migration commits on its own and that release
  // serves on the schema between them; the release after this one drops it.
  await sql`
    CREATE FUNCTION append_audit_event(
      actor text, action text, account_id bigint, key_id bigint, changes jsonb, request_id text, on_behalf_of text
    ) RETURNS bigint
    LANGUAGE sql SET search_path = pg_catalog, public AS $$
      SELECT public.append_audit_event(actor, action, account_id, key_id, changes, request_id, on_behalf_of, NULL::bytea)
    $$
  `.execute(db)
  await sql`REVOKE ALL ON FUNCTION append_audit_event(text, text, bigint, bigint, jsonb, text, text) FROM PUBLIC`.execute(
    db
  )
  await sql`
    GRANT EXECUTE ON FUNCTION append_audit_event(text, text, bigint, bigint, jsonb, text, text) TO ${sql.id(SERVICE_ROLE)}
  `.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP FUNCTION append_audit_event(text, text, bigint, bigint, jsonb, text, text)`.execute(db)
  await sql`DROP FUNCTION revoke_operator(bytea, text, bigint, text, text)`.execute(db)
  await sql`DROP FUNCTION create_operator(bytea, text, text, text, text, bytea, text, text)`.execute(db)
  await sql`DROP FUNCTION operator_maker(bytea, text)`.execute(db)
  await sql`DROP FUNCTION append_audit_event(text, text, bigint, bigint, jsonb, text, text, bytea)`.execute(db)
  await sql`
    CREATE FUNCTION append_audit_event(
      actor text, action text, account_id bigint, key_id bigint, changes jsonb, request_id text, on_behalf_of text
    ) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, public AS $$
    DECLARE
      appended bigint;
    BEGIN
      IF actor IS NULL OR actor !~ '^(bootstrap|operator:[a-z0-9][a-z0-9._-]{0,62}|key:ask_[0-9A-Za-z]{8}|cli:.{1,251})$' THEN
        RAISE EXCEPTION 'audit actor of no known shape' USING ERRCODE = '22023';
      END IF;
      IF actor LIKE 'operator:%'
        AND NOT EXISTS (SELECT 1 FROM public.operators o WHERE o.name = substr(actor, 10)) THEN
        RAISE EXCEPTION 'audit actor names no operator' USING ERRCODE = '22023';
      END IF;
      IF actor LIKE 'key:%' AND NOT EXISTS (SELECT 1 FROM public.api_keys k WHERE k.prefix = substr(actor, 5)) THEN
        RAISE EXCEPTION 'audit actor names no key' USING ERRCODE = '22023';
      END IF;
      INSERT INTO public.audit_events (at, actor, action, account_id, key_id, changes, request_id, on_behalf_of)
      VALUES (now(), actor, action, account_id, key_id, coalesce(changes, '{}'), request_id, on_behalf_of)
      RETURNING id INTO appended;
      RETURN appended;
    END
    $$
  `.execute(db)
  await sql`REVOKE ALL ON FUNCTION append_audit_event(text, text, bigint, bigint, jsonb, text, text) FROM PUBLIC`.execute(
    db
  )
  await sql`
    GRANT EXECUTE ON FUNCTION append_audit_event(text, text, bigint, bigint, jsonb, text, text) TO ${sql.id(SERVICE_ROLE)}
  `.execute(db)
  await sql`DROP FUNCTION credential_holder(bytea)`.execute(db)
  await sql`DROP FUNCTION owner_session()`.execute(db)
  await sql`GRANT INSERT, UPDATE ON operators TO ${sql.id(SERVICE_ROLE)}`.execute(db)
  await sql`DROP TABLE admin_credentials`.execute(db)
}
