import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { Ref } from '../schemas/ref.js'
import { createOperator, describeOperator, listOperators, revokeOperator } from '../services/operators.js'
import { actorOf, errors, invalid, json } from './common.js'
import { AuditActorHeaders, IssuedOperator, NewOperator, Operator, OperatorParams, Whoami } from './schemas.js'

/** Operators of the admin API and their roles, under /admin/v1: made, listed and revoked by an admin. */
const operators: FastifyPluginAsyncTypebox = async (app) => {
  const { db } = app

  app.get(
    '/whoami',
    {
      schema: {
        operationId: 'whoami',
        summary: "The operator this request's token is, and its role",
        response: { 200: json('The operator', Ref(Whoami)), ...errors() }
      }
    },
    async (request) => {
      const { actor, name, role } = request.operator!
      return { actor, name, role }
    }
  )

  app.post(
    '/operators',
    {
      config: { adminRole: 'admin' },
      schema: {
        operationId: 'createOperator',
        summary: 'Make an operator with a role; its token is shown only in this answer and stored only as its hash',
        headers: AuditActorHeaders,
        body: Ref(NewOperator),
        response: {
          201: json('The operator, with its token', Ref(IssuedOperator)),
          ...errors(invalid, [409, '`operator_exists`: an operator has this name already'])
        }
      }
    },
    async (request, reply) => {
      const issued = await createOperator(db, actorOf(request), request.body)
      return reply.code(201).send({ ...describeOperator(issued), token: issued.token })
    }
  )

  app.get(
    '/operators',
    {
      config: { adminRole: 'admin' },
      schema: {
        operationId: 'listOperators',
        summary: 'Every operator, revoked ones included, in ascending id order; never a token',
        response: { 200: json('The operators', Type.Array(Ref(Operator))), ...errors() }
      }
    },
    async () => (await listOperators(db)).map(describeOperator)
  )

  app.post(
    '/operators/:id/revoke',
    {
      config: { adminRole: 'admin' },
      schema: {
        operationId: 'revokeOperator',
        summary: "Revoke an operator's token: refused from its next request on, on every instance",
        headers: AuditActorHeaders,
        params: OperatorParams,
        response: {
          200: json('The operator, revoked', Ref(Operator)),
          ...errors(invalid, [404, '`not_found`: no operator has this id'])
        }
      }
    },
    async (request) => describeOperator(await revokeOperator(db, actorOf(request), request.params.id))
  )
}

export default operators
