-- The database roles of README "Security", made once by a superuser in the service's database. The
-- postgres image runs this on its first start (compose mounts it in /docker-entrypoint-initdb.d);
-- elsewhere: psql "postgres://SUPERUSER@HOST/DATABASE" -f deploy/postgres/roles.sql (psql 15 or later).
-- Names and passwords come from the environment: DATABASE_OWNER_PASSWORD and DATABASE_SERVICE_PASSWORD,
-- and optionally DATABASE_OWNER_ROLE and DATABASE_SERVICE_ROLE.
\set ON_ERROR_STOP on
\getenv owner_role DATABASE_OWNER_ROLE
\getenv owner_password DATABASE_OWNER_PASSWORD
\getenv service_role DATABASE_SERVICE_ROLE
\getenv service_password DATABASE_SERVICE_PASSWORD
\if :{?owner_role}
\else
  \set owner_role animal_store_owner
\endif
\if :{?service_role}
\else
  \set service_role animal_store_service
\endif
\if :{?owner_password}
\else
  DO $$ BEGIN RAISE EXCEPTION 'roles.sql: set DATABASE_OWNER_PASSWORD'; END $$;
\endif
\if :{?service_password}
\else
  DO $$ BEGIN RAISE EXCEPTION 'roles.sql: set DATABASE_SERVICE_PASSWORD'; END $$;
\endif

-- Owns the database and its schema, and runs the migrations: npm run --silent cli -- migrate.
CREATE ROLE :"owner_role" LOGIN PASSWORD :'owner_password';
ALTER DATABASE :"DBNAME" OWNER TO :"owner_role";
ALTER SCHEMA public OWNER TO :"owner_role";

-- The group role that migration 0009 grants the service's rights to: the rows it uses, no DDL.
DO $$ BEGIN
  CREATE ROLE animal_store_app NOLOGIN;
EXCEPTION WHEN duplicate_object THEN
  NULL;
END $$;
-- The service and the CLI's key commands log in as this member of it.
CREATE ROLE :"service_role" LOGIN PASSWORD :'service_password' IN ROLE animal_store_app;
-- Its statements roll back within a second of it vanishing (docs/reliability.md), even where migration 0012 could not.
ALTER ROLE :"service_role" SET client_connection_check_interval = '1s';
-- A session that holds a transaction open and idle (a leaked password's, holding locks) is ended. Above
-- the longest idle wait of the service's own: the webhook worker's send, at most WEBHOOKS_TIMEOUT_MS (60 s).
ALTER ROLE :"service_role" SET idle_in_transaction_session_timeout = '2min';

-- Nobody else creates anything here: no tables in public (PostgreSQL 15 and later already keep
-- PUBLIC out), no temporary tables.
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
REVOKE TEMPORARY ON DATABASE :"DBNAME" FROM PUBLIC;
